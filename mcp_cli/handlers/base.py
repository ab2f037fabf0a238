"""What every handler receives and implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..result import Result
from ..tree import Command, Tree


@dataclass
class Call:
    """One parsed call: the command, its path (`pdf text extract`), parsed values and the raw tokens after it."""

    tree: Tree
    command: Command
    path: str
    values: dict[str, Any]
    tokens: list[str]
    upstreams: Any = None  # the running pool of upstream servers, for `mcp` handlers
    cwd: str | None = None  # where the caller works (an MCP client's first root); None: this process's own


class Handler(Protocol):
    async def run(self, call: Call) -> Result: ...


def timeout_of(ref: dict, tree: Tree) -> float:
    return float(ref.get("timeout", tree.settings.timeout))
