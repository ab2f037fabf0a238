"""What every handler receives and implements, and what a kind of handler provides to the runtime."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from ..entities import Context
from ..errors import HandlerTimeout
from ..refs import HandlerRef
from ..result import Result
from ..tree import Command, Tree

if TYPE_CHECKING:
    from .relay import Relay

WHOLE_MAX = 64 * 2**20  # characters of output a handler keeps when its whole output is asked for (`CallScope.whole`)


T = TypeVar("T")


async def in_thread(work: Callable[[], T], timeout: float, what: str) -> T:
    """`work()` in a worker thread, so that the event loop serves other calls meanwhile; abandoned with
    HandlerTimeout (naming `what`) after `timeout` seconds."""
    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except TimeoutError:
        raise HandlerTimeout(f"{what} did not finish within {timeout:g} s; give it a smaller input.") from None


@dataclass(frozen=True)
class CallScope:
    """What one call carries from its caller to every command it runs, whatever the surface: where the caller works
    (an MCP client's first root; None: this process's own folder), its session context (see `entities.py`),
    whether its `@FILE` arguments name files of this machine (stdio and `mcp-cli run`: yes; HTTP, whose callers'
    files are not this machine's: no), and the caller's terminal under `mcp-cli run`: its (stdin, stdout)
    descriptors, which a script reads and writes itself, byte for byte and whole (stdout None: a program reads the
    caller's, so the output is read, to be answered within the budget). `whole`: the command's output goes on to a
    pipeline's next stage, so handlers keep all of it (up to WHOLE_MAX characters; the pipeline's answer is capped)
    and a script writes no terminal. `relay`: the caller as an upstream server sees it (`relay.py`), where an
    upstream's questions, progress and log messages during the call go; None: a caller that answers nothing."""

    cwd: str | None = None
    context: Context | None = None
    local_files: bool = False
    terminal: tuple[int, int | None] | None = None
    whole: bool = False
    relay: Relay | None = None


@dataclass
class Call:
    """One parsed call: the command's path (`pdf text extract`), parsed values and the raw tokens after it, and what
    the call carries from its caller (`scope`)."""

    path: str
    values: dict[str, Any]
    tokens: list[str]
    scope: CallScope = field(default_factory=CallScope)
    stdin: bytes | None = None  # what a pipeline's previous stage gave, for a script's standard input
    usage: Callable[[Command, int], str] | None = None  # the usage line of a command after its path, in N lines

    @property
    def cwd(self) -> str | None:
        """Where the caller works (an MCP client's first root); None: this process's own."""
        return self.scope.cwd

    @property
    def context(self) -> Context | None:
        """The caller's session context (see `entities.py`)."""
        return self.scope.context


class Handler(Protocol):
    async def run(self, call: Call) -> Result: ...


class HandlerClass(Protocol):
    """A kind's handler class, made from a reference of its kind (see `refs.py`) and the tree."""

    def __call__(self, ref: Any, tree: Tree) -> Handler: ...


class Kind:
    """One kind of handler for a tree: makes handlers from references of its kind, and owns what its handlers
    share while a runtime serves (`start`; `stop` from any task; `aclose`). This base shares nothing. Runtimes over
    parts of the tree (a client's scope) share the kind: each makes its handlers for its own part."""

    def __init__(self, handler: HandlerClass, tree: Tree) -> None:
        self.handler = handler
        self.tree = tree

    def make(self, ref: HandlerRef, tree: Tree) -> Handler:
        return self.handler(ref, tree)

    def adopt(self, tree: Tree) -> None:
        """Make handlers for `tree` from now on (a fuller version of the same source)."""
        self.tree = tree

    async def start(self) -> None:
        """Open what the handlers share."""

    async def restart(self, servers: set[str]) -> None:
        """End the sessions of these upstream servers, if the kind has any: the next call starts them again."""

    async def stop(self) -> None:
        """End what calls started (callable from any task)."""

    async def aclose(self) -> None:
        await self.stop()


def timeout_of(ref: HandlerRef, tree: Tree) -> float:
    """A command's timeout: its reference's, else the tree's."""
    return float(tree.settings.timeout if ref.timeout is None else ref.timeout)
