"""Token counts (o200k_base, offline) of what an agent reads: a static tool list vs the one tool and its help.

The encoding is built with tiktoken's public `Encoding` from the o200k_base ranks that ship gzipped in
`mcp_cli/data/` (hash-checked), so nothing is downloaded, cached or set in the environment. tiktoken comes with the
`tokens` extra (`pip install 'mcp-cli-tree[tokens]'`), for `mcp-cli tokens` and the benchmarks only.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.schema import input_schema
from ..tree import Command, Group, Tree

if TYPE_CHECKING:
    from tiktoken import Encoding

RANKS = Path(__file__).resolve().parent.parent / "data" / "o200k_base.tiktoken.gz"
RANKS_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken's, of the unpacked file
# o200k_base's pre-tokenizer and special tokens, as tiktoken_ext.openai_public defines them.
PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


class MissingExtra(ImportError):
    """tiktoken is not installed; the message says how to install it."""


@functools.cache
def encoding() -> Encoding:
    """o200k_base, from the shipped ranks; MissingExtra without tiktoken."""
    try:
        import tiktoken
    except ImportError:
        raise MissingExtra("token counts need tiktoken: pip install 'mcp-cli-tree[tokens]'") from None
    data = gzip.decompress(RANKS.read_bytes())
    if hashlib.sha256(data).hexdigest() != RANKS_SHA256:
        raise ValueError(f"{RANKS}: not the o200k_base ranks (its SHA-256 differs); reinstall mcp-cli")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines())}
    return tiktoken.Encoding(name="o200k_base", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL)


def count(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def tool_json(tools: list[dict[str, Any]]) -> str:
    """A tools/list result as a client receives it (compact JSON)."""
    return json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)


def static_tool(path: list[str], cmd: Command) -> dict[str, Any]:
    """The tool a static MCP server would list for a command: its own schema, or one made from its params."""
    tool = {
        "name": cmd.handler.tool or "_".join(path).replace("-", "_"),
        "description": cmd.description or cmd.summary,
        "inputSchema": input_schema(cmd),
    }
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

    commands = [(p, n) for p, n in tree.walk() if isinstance(n, Command) and n.handler.listed]
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
