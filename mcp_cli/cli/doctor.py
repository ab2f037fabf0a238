"""`mcp-cli doctor SOURCE`: what would go wrong serving SOURCE, one line per finding, and a summary line.

For an MCP client config: each server started now (no cache), and why one failed (a command not on PATH, an unset
variable, a login needed, no answer in time, a crash with its stderr's last lines), as discovery tells it; the tool
names and input schemas a model API refuses when a host serves the tools directly (and whether mcp-cli's own tool
passes the same checks); tools whose names are one in kebab-case, and the command each is called by; servers whose
config keys are (or whose key is the root's `search`), and the domain each is called by. For a skill folder: the
warnings its build gives. Exit status 1 when a server failed, else 0.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import SourceError
from ..refs import McpToolRef
from ..sources import discovery, mcp_config, mcp_tools
from ..sources.skill import folder as skill_folder
from ..surfaces.tool import INPUT_SCHEMA
from ..text import command_name
from ..tree import Command, Group, Tree

API_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # a tool name model APIs (Anthropic, OpenAI) accept
TOP_LEVEL = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else", "enum")  # refused at an input schema's top
TAIL_LINES = 5  # lines of a crashed server's stderr shown


@dataclass
class Finding:
    """One line of the report: its `section`, what it is about (`subject`), what is wrong (`problem`), and for a
    server that failed, the last lines of its stderr (`detail`)."""

    section: str
    subject: str
    problem: str
    detail: str = ""


@dataclass
class Report:
    source: str
    kind: str  # "config" or "skill"
    findings: list[Finding]
    servers: dict[str, str]  # name -> "ok: N tools" or why it failed
    failed: int = 0
    safe: str = ""  # whether mcp-cli's own tool passes the checks the tools failed
    summary: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n"


def name_problems(name: str) -> list[str]:
    """Why a model API refuses `name` as a tool name ([] when it accepts it)."""
    if API_NAME.fullmatch(name):
        return []
    out = [f"{len(name)} characters, over 64"] if len(name) > 64 else []
    others = sorted({c for c in name if not API_NAME.fullmatch(c)})
    if others:
        out.append("characters outside a-z A-Z 0-9 _ - (" + " ".join(repr(c)[1:-1] or "space" for c in others) + ")")
    return out or ["empty"]


def schema_problems(schema: object) -> list[str]:
    """Why a model API refuses `schema` as a tool's input schema ([] when it accepts it)."""
    if not isinstance(schema, dict):
        return ["the input schema is not an object"]
    out = [] if schema.get("type") == "object" else [f"top-level type {json.dumps(schema.get('type'))}, not object"]
    keys = [k for k in TOP_LEVEL if k in schema]
    return out + ([f"top-level {', '.join(keys)}"] if keys else [])


def check(source: str, options: dict[str, Any]) -> Report:
    """The report for a config file or a skill folder; SourceError for anything else."""
    path = Path(source)
    if path.is_dir():
        return _skill(path)
    if path.is_file() and mcp_config.looks_like_config(path):
        return _config(path, options)
    raise SourceError(f"{source}: not an MCP client config or a skill folder")


def _skill(path: Path) -> Report:
    tree, warnings = skill_folder.load(path)
    commands = sum(1 for _, n in tree.walk() if isinstance(n, Command))
    findings = [Finding("skill", "", w) for w in warnings]
    report = Report(str(path), "skill", findings, {})
    report.summary = f"skill {tree.name!r}: {commands} command{'s' * (commands != 1)}, {_count(findings, 'warning')}"
    return report


def _config(path: Path, options: dict[str, Any]) -> Report:
    servers, warnings = mcp_config.read(path, options.get("only"), options.get("skip"))
    findings = [Finding("config", "", w.removeprefix(f"{path}: ")) for w in warnings]
    budget = float(options.get("startup") or discovery.startup_budget(one_shot=True))
    found, failed = discovery.listings_now(servers, refresh=True, budget=budget, progress=True)
    report = Report(str(path), "config", findings, {}, failed=len(failed))
    for server in servers:
        if server.name in failed:
            why, _, tail = failed[server.name].partition("; its stderr ends with:\n")
            detail = "\n".join(tail.strip().splitlines()[-TAIL_LINES:])
            findings.append(Finding("servers", server.name, why, detail))
            report.servers[server.name] = f"failed: {why}"
        elif server.name in found:
            report.servers[server.name] = f"ok: {len(found[server.name].get('tools', []))} tools"
    if not found:
        report.summary = _summary(report, 0, 0, 0)
        return report
    name = options.get("name") or mcp_tools.default_name(path, [s.name for s in servers])
    keep = {"tools": options.get("tools"), "exclude_tools": options.get("exclude_tools")}
    threshold = options.get("threshold") or mcp_tools.THRESHOLD
    tree = mcp_tools.build(name, servers, found, threshold, failed=failed, retried=False, **keep)
    tools = {(s.name, t["name"]): t for s in servers for t in found.get(s.name, {}).get("tools", [])}
    called = {
        (c.handler.server, c.handler.tool): " ".join(p)
        for p, c in tree.walk()
        if isinstance(c, Command) and isinstance(c.handler, McpToolRef)  # not a prompt
    }
    refused = 0
    for (server_name, tool_name), tool in tools.items():
        if (server_name, tool_name) not in called:  # left out by --tool/--exclude-tool
            continue
        problems = [f"name: {p}" for p in name_problems(tool_name)] + schema_problems(tool.get("inputSchema"))
        if problems:
            refused += 1
            findings.append(Finding("api", f"{server_name}/{tool_name}", "; ".join(problems)))
    ours = [f"name: {p}" for p in name_problems(tree.name)] + schema_problems(INPUT_SCHEMA)
    if ours:
        findings.append(Finding("api", tree.name, "; ".join(ours) + " (the one tool's name: give another with --name)"))
    elif refused:
        report.safe = (
            f"mcp-cli serves them safely: a host sees one tool, `{tree.name}`, whose input schema is "
            "mcp-cli's own (argv or command); these tools are commands in it"
        )
    alike = _collisions(tools, called) + _domains(tree, [s.name for s in servers if s.name in report.servers])
    findings += alike
    report.summary = _summary(report, len(called), refused, len(alike))
    return report


def _collisions(tools: dict[tuple[str, str], dict[str, Any]], called: dict[tuple[str, str], str]) -> list[Finding]:
    """Tools of one server whose names are one in kebab-case, each with the command that calls it."""
    by_name: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for key in tools:
        if key in called:
            by_name[(key[0], command_name(key[1]))].append(key)
    return [
        Finding("names", f"{server}: {shared}", ", ".join(f"{t} -> `{called[(server, t)]}`" for _, t in keys))
        for (server, shared), keys in by_name.items()
        if len(keys) > 1
    ]


def _domains(tree: Tree, keys: list[str]) -> list[Finding]:
    """Servers whose config keys are one in kebab-case, or one named as a command of the root is (`search`), each
    with the domain that reaches it."""
    held = {n.name for n in tree.root.children if not isinstance(n, Group)}
    by_name: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        by_name[command_name(key)].append(key)
    return [
        Finding(
            "domains",
            shared,
            ", ".join(f"{k} -> `{_domain(tree, k)}`" for k in sorted(same))
            + (f" (`{shared}` is the root's own command)" if shared in held else ""),
        )
        for shared, same in by_name.items()
        if len(same) > 1 or shared in held
    ]


def _domain(tree: Tree, key: str) -> str:
    """The domain of the server `key`: the group so named, else the one with it as an alias, in the root or in a
    group of servers alike."""
    groups = sorted(((p, g) for p, g in tree.walk() if isinstance(g, Group) and len(p) <= 2), key=lambda pg: len(pg[0]))
    found = [p for p, g in groups if g.name == key] or [p for p, g in groups if key in g.aliases]
    return " ".join(found[0]) if found else key


def _count(findings: list[Finding], what: str) -> str:
    return f"{len(findings)} {what}{'s' * (len(findings) != 1)}"


def _summary(report: Report, tools: int, refused: int, collisions: int) -> str:
    ok = len(report.servers) - report.failed
    parts = [f"{len(report.servers)} server{'s' * (len(report.servers) != 1)}: {ok} ok, {report.failed} failed"]
    parts.append(f"{tools} tool{'s' * (tools != 1)}")
    if refused:
        parts.append(f"{refused} a model API would refuse served directly (served safely here)")
    if collisions:
        parts.append(f"{collisions} set{'s' * (collisions != 1)} of names alike in kebab-case (each has its command)")
    return "; ".join(parts)


HEADINGS = {
    "config": "Config",
    "skill": "Skill build warnings",
    "api": "Tool names and schemas a model API refuses when a host serves the tools directly",
    "names": "Tool names that are one in kebab-case (each keeps a command of its own)",
    "domains": "Server keys that are one in kebab-case (each server keeps a domain of its own)",
}


def render(report: Report) -> str:
    """The report as a person reads it: a section per kind of finding, a line each, and the summary."""
    lines = [f"mcp-cli doctor: {report.source}"] + _section(report, "config")
    if report.servers:
        lines += ["", "Servers:"]
        details = {f.subject: f.detail for f in report.findings if f.section == "servers"}
        for name, state in report.servers.items():
            lines.append(f"  {name}: {state}")
            lines += [f"      {line}" for line in details.get(name, "").splitlines()]
    for section in ("skill", "api", "names", "domains"):
        lines += _section(report, section)
    return "\n".join(lines + ["", report.summary]) + "\n"


def _section(report: Report, section: str) -> list[str]:
    """A section's heading and a line per finding ([] for none); under the names and schemas, the line on the one
    tool."""
    found = [
        f"  {f.subject}: {f.problem}" if f.subject else f"  {f.problem}"
        for f in report.findings
        if f.section == section
    ]
    safe = [f"  {report.safe}"] if section == "api" and report.safe else []
    return ["", f"{HEADINGS[section]}:", *found, *safe] if found else []
