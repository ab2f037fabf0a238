"""Token counts (o200k_base, offline) of what an agent reads: a static tool list vs the one tool and its help.

The o200k_base ranks ship gzipped in `mcp_cli/data/`; on first use they are unpacked into tiktoken's cache
folder under the name tiktoken itself looks for, so tiktoken loads (and hash-checks) them without a network.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.schema import input_schema
from ..tree import Command, Group, Tree

if TYPE_CHECKING:
    from tiktoken import Encoding

_CACHE_KEY = "fb374d419588a4632f3f557e76b4b70aebbca790"  # tiktoken's cache name for o200k_base
_DATA = Path(__file__).resolve().parent / "data" / "o200k_base.tiktoken.gz"


@functools.cache
def encoding() -> Encoding:
    import tiktoken

    from ..sources.discovery import cache_dir

    folder = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or cache_dir() / "tiktoken")
    target = folder / _CACHE_KEY
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(gzip.decompress(_DATA.read_bytes()))
        tmp.replace(target)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    return tiktoken.get_encoding("o200k_base")


def count(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def tool_json(tools: list[dict[str, Any]]) -> str:
    """A tools/list result as a client receives it (compact JSON)."""
    return json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)


def static_tool(path: list[str], cmd: Command) -> dict[str, Any]:
    """The tool a static MCP server would list for a command: its own schema, or one made from its params."""
    tool = {"name": cmd.handler.get("tool") or "_".join(path).replace("-", "_"), "description": cmd.description
            or cmd.summary, "inputSchema": input_schema(cmd)}  # fmt: skip
    if cmd.annotations:
        tool["annotations"] = cmd.annotations
    return tool


def report(tree: Tree) -> dict[str, Any]:
    """Up-front tokens (static list vs the one tool) and tokens per level of help, as the runtime answers."""
    import anyio

    from ..engine.runtime import Runtime

    runtime = Runtime(tree)

    def helped(path: list[str]) -> int:
        return count(anyio.run(runtime.call, [*path, "--help"]).text())

    commands = [(p, n) for p, n in tree.walk() if isinstance(n, Command) and n.handler.get("kind") != "search"]
    command_tokens = [helped(p) for p, _ in commands]
    return {
        "tool": tree.name,
        "commands": len(commands),
        "static": count(tool_json([static_tool(p, n) for p, n in commands])),
        "single": count(tool_json([one_tool(tree)])),
        "root_help": helped([]),
        "groups": {" ".join(p): helped(p) for p, n in tree.walk() if isinstance(n, Group)},
        "command_median": statistics.median(command_tokens) if command_tokens else 0,
        "command_max": max(command_tokens, default=0),
    }


def one_tool(tree: Tree) -> dict[str, Any]:
    """The tool definition a client receives from `tools/list` for this tree."""
    from ..engine.runtime import Runtime
    from ..surfaces.mcp_server import tool

    return tool(Runtime(tree)).model_dump(by_alias=True, exclude_none=True, mode="json")


def render(r: dict[str, Any]) -> str:
    ratio = r["single"] / r["static"] if r["static"] else 0.0
    lines = [
        f"{r['tool']}: {r['commands']} commands (o200k_base tokens)",
        "",
        f"  up front, static tool list   {r['static']:>8,}",
        f"  up front, one mcp-cli tool   {r['single']:>8,}   ({ratio:.3f}x of static)",
        f"  root help                    {r['root_help']:>8,}",
    ]
    lines += [f"  help of {path:<20} {tokens:>8,}" for path, tokens in r["groups"].items()]
    lines += [
        f"  command help, median         {r['command_median']:>8,.0f}",
        f"  command help, max            {r['command_max']:>8,}",
    ]
    return "\n".join(lines) + "\n"
