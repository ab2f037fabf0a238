"""mcp-cli: a command tree served as one argv-driven MCP tool, with progressive --help.

The public API; every other name is internal and may change::

    from mcp_cli import Runtime, load

    tree = load("skills/pdf")  # a skill folder, an MCP client config, a tree JSON file or module:attribute
    async with Runtime(tree) as runtime:
        result = await runtime.call(["text", "--help"])  # a Result: ok, output, error, ...

Trees can be written by hand too (`Tree`, `Group`, `Command`, `Param`, `Topic`, `Settings`). `mcp_cli.testing`
drives a tree in tests (`invoke`, `served`, `call`, `mock_upstream`, `wrap`). Names are imported on first use, so
`import mcp_cli` alone costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {  # public name -> the module that defines it
    "Command": "tree",
    "Group": "tree",
    "Param": "tree",
    "Settings": "tree",
    "Topic": "tree",
    "Tree": "tree",
    "Runtime": "engine.runtime",
    "Result": "result",
    "CallError": "errors",
    "SourceError": "errors",
    "load": "sources.loader",
}
__all__ = [
    "CallError",
    "Command",
    "Group",
    "Param",
    "Result",
    "Runtime",
    "Settings",
    "SourceError",
    "Topic",
    "Tree",
    "__version__",
    "load",
    "testing",
]

if TYPE_CHECKING:  # `testing` not among them: it is above the layers that import the package for its version
    from .engine.runtime import Runtime
    from .errors import CallError, SourceError
    from .result import Result
    from .sources.loader import load
    from .tree import Command, Group, Param, Settings, Topic, Tree


def __getattr__(name: str) -> Any:
    if name == "testing":
        return importlib.import_module(".testing", __name__)
    if name not in _WHERE:
        raise AttributeError(f"module 'mcp_cli' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
