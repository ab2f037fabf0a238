"""The tool corpora of the benchmarks (bench/data, with their licences) as MCP tool lists, and synthetic sets.

A corpus is a list of servers, each `(name, [tool dicts {name, description, inputSchema, ...}])`, plus its tasks:
`(prompt or label, [(server, tool name), ...])`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data"
SIZES = (25, 50, 100, 200, 500, 1000, 10000)
SEED = 20261122
_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


@dataclass
class Corpus:
    name: str
    servers: list[tuple[str, list[dict[str, Any]]]]
    tasks: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [t for _, tools in self.servers for t in tools]


def boundary_schema(parameters: dict[str, Any] | None) -> dict[str, Any]:
    """Boundary's parameter shorthand -> JSON Schema.

    `{owner: {type: string, required: true, description: "..."}}` becomes
    `{"type": "object", "properties": {"owner": {"type": "string", "description": "..."}}, "required": ["owner"]}`.
    `required` moves to the object's list; any other key (enum, default, items) is kept on the property;
    an unknown or missing type becomes "string"; `array` without `items` gets string items.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in (parameters or {}).items():
        spec = dict(spec or {})
        if spec.pop("required", False) is True:
            required.append(str(name))
        kind = spec.get("type")
        spec["type"] = kind if kind in _TYPES else "string"
        if spec["type"] == "array" and "items" not in spec:
            spec["items"] = {"type": "string"}
        properties[str(name)] = spec
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def boundary(category: str | None = None) -> Corpus:
    """150 tools over 16 services (the name prefix); 161 prompts, each with one expected tool (of a `category`
    only, when given: `direct` or `ambiguous`)."""
    tools = yaml.safe_load((DATA / "boundary" / "definitions.yaml").read_text())["tools"]
    servers: dict[str, list[dict[str, Any]]] = {}
    for t in tools:
        service = t["name"].split("_", 1)[0]
        servers.setdefault(service, []).append(
            {"name": t["name"], "description": t["description"], "inputSchema": boundary_schema(t.get("parameters"))}
        )
    prompts = yaml.safe_load((DATA / "boundary" / "benchmark.yaml").read_text())["prompts"]
    tasks = [
        (p["prompt"], [(p["expected_tool"].split("_", 1)[0], p["expected_tool"])])
        for p in prompts
        if category in (None, p["category"])
    ]
    return Corpus("boundary", list(servers.items()), tasks)


def github() -> Corpus:
    """GitHub's MCP server: 117 production tools; `_toolset` kept (it maps 86 of them). Every tool is a task."""
    tools = json.loads((DATA / "github-mcp-server" / "tools_toolsnaps.json").read_text())
    tools = [{k: v for k, v in t.items() if k != "_snap"} for t in tools]
    return Corpus("github", [("github", tools)], [(t["name"], [("github", t["name"])]) for t in tools])


def progressive() -> Corpus:
    """ProgressiveMCPBench: 15 servers, 104 tools, 20 tasks naming their required servers and tools."""
    servers = json.loads((DATA / "progressivemcpbench" / "servers.json").read_text())
    pairs = [(name, [dict(t) for t in s["tools"]]) for name, s in servers.items()]
    tasks = []
    for task in json.loads((DATA / "progressivemcpbench" / "tasks.json").read_text()):
        needed = []
        for tool in task["required_tools"]:
            owner = next(
                (s for s in task["required_servers"] if any(t["name"] == tool for t in servers[s]["tools"])), None
            )
            if owner:
                needed.append((owner, tool))
        if needed:
            tasks.append((task["Question"], needed))
    return Corpus("progressivemcpbench", pairs, tasks)


def synthetic(size: int, seed: int = SEED) -> Corpus:
    """`size` tools sampled with a fixed seed from the three real corpora. Past the pool's size, a tool's k-th
    copy lives on a replica of its server (`github-2`), as when several accounts of one service are connected."""
    pool = [(server, t) for c in (boundary(), github(), progressive()) for server, tools in c.servers for t in tools]
    rng = random.Random(seed)
    picks = rng.sample(pool, size) if size <= len(pool) else [pool[i % len(pool)] for i in range(size)]
    if size > len(pool):
        rng.shuffle(picks)
    copies: dict[tuple[str, str], int] = {}
    servers: dict[str, list[dict[str, Any]]] = {}
    for server, tool in picks:
        k = copies[(server, tool["name"])] = copies.get((server, tool["name"]), 0) + 1
        servers.setdefault(server if k == 1 else f"{server}-{k}", []).append(tool)
    tasks = [(t["name"], [(s, t["name"])]) for s, tools in servers.items() for t in tools]
    return Corpus(f"synthetic-{size}", sorted(servers.items()), tasks)
