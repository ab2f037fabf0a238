"""Conformance: server-everything through mcp-cli

Each feature of the npm `@modelcontextprotocol/server-everything` (tests/node), by path (direct; through the
one-tool surface; through the meta-tools surface; through OpenAPI, which carries what a command can) and by client
era (handshake: `initialize`; 2026: the SDK client's default `auto`, which speaks 2026-07-28 where the server does).
Each cell is the outcome of the named tests, which drive a real MCP client (or HTTP for OpenAPI) against the real
server, run again by `python -m bench`. server-everything itself speaks only the handshake era: a 2026 client that
talks to it directly falls back to 2025-11-25, so the direct 2026 column is that fallback, while through mcp-cli a
2026 client speaks 2026-07-28 to mcp-cli. OpenAPI has no client era (one HTTP POST per call). The one-tool surface
and OpenAPI reach resources and prompts both as MCP methods (one tool) and as the tree's commands
(`SERVER resources read URI`, `SERVER prompts get NAME --ARG VALUE`); the meta surface calls those commands with
`call_tool`. The interactive rows (elicitation, sampling, progress, cancellation, logging, list changes, tasks) are
driven by `tests/test_interactive.py` with server-everything and, where it has no such tool (a 2026-era upstream, a
list change, cancellation), the MCPServer of `tests/fixtures/interactive/server.py`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ("tests/test_wrap_resources.py", "tests/test_interactive.py")
PATHS = ("direct", "one tool", "meta", "OpenAPI")
ERAS = {"handshake": ("legacy", "handshake"), "2026": ("auto", "2026")}  # the column's name: the tests' parameters
META = "test_the_meta_surface_reaches_them_as_commands"
OPENAPI = "test_openapi_runs_them_as_commands"
LINKS = "test_resource_links_a_tool_returns_are_readable"
TREE = "test_the_tree_carries_resources_and_prompts"
SCOPED = "test_a_scope_sees_only_the_resources_and_prompts_its_paths_cover"
Cell = tuple[str, ...] | str  # the tests that back it, or why it is not measured
INTERACTIVE = "test_through_the_meta_surface"
NO_WAY_BACK = "refused with what was asked: one HTTP request and answer has no way back to the caller"
NOTES = (
    "direct, the other interactive rows: the reference (server-everything or the test's MCPServer does it itself); "
    "not driven by a test of its own",
    "`mcp-cli run` asks form fields on a terminal, refuses without one, and shows progress: "
    "`test_run_asks_on_a_terminal`, `test_run_refuses_elicitation_without_a_terminal`, "
    "`test_run_shows_progress_on_a_terminal`; over streamable HTTP: `test_over_streamable_http`",
    "not done: a task-capable client cannot get the upstream's task itself (the one tool answers when it is done)",
)
REFERENCE = "reference (not tested apart)"
DIRECT_ELICITATION = ("test_direct_elicitation_form_and_url",)
DIRECT_SAMPLING = ("test_direct_sampling_and_progress",)


def _relayed(one_tool: tuple[str, ...], meta: Cell, openapi: Cell, direct: Cell = REFERENCE) -> dict[str, Cell]:
    return {"direct": direct, "one tool": one_tool, "meta": meta, "OpenAPI": openapi}


ROWS: list[tuple[str, dict[str, Cell]]] = [
    (
        "tools",
        {
            "direct": ("test_direct_tools",),
            "one tool": ("test_tools_through_the_one_tool",),
            "meta": (META,),
            "OpenAPI": (OPENAPI,),
        },
    ),
    (
        "capability-gated tools",
        {
            "direct": ("test_direct_tools",),
            "one tool": ("test_capability_gated_tools_are_listed",),
            "meta": (INTERACTIVE,),
            "OpenAPI": "listed: the tree is shared (not tested apart)",
        },
    ),
    (
        "resources (list, read)",
        {
            "direct": ("test_direct_resources_templates_and_links",),
            "one tool": (
                "test_resources_of_every_server_listed_with_clashing_uris_prefixed",
                "test_static_templated_and_clashing_resources_read_from_the_right_server",
                TREE,
                SCOPED,
            ),
            "meta": (META,),
            "OpenAPI": (OPENAPI,),
        },
    ),
    (
        "resource templates (list, read one filled in)",
        {
            "direct": ("test_direct_resources_templates_and_links",),
            "one tool": (
                "test_resources_of_every_server_listed_with_clashing_uris_prefixed",
                "test_static_templated_and_clashing_resources_read_from_the_right_server",
                TREE,
            ),
            "meta": (META,),
            "OpenAPI": (OPENAPI,),
        },
    ),
    (
        "resource links (read what a tool linked)",
        {
            "direct": ("test_direct_resources_templates_and_links",),
            "one tool": (LINKS,),
            "meta": (META,),
            "OpenAPI": (OPENAPI,),
        },
    ),
    (
        "prompts (list, get with arguments)",
        {
            "direct": ("test_direct_prompts",),
            "one tool": ("test_prompts_listed_with_clashing_names_prefixed_and_got_with_arguments", TREE, SCOPED),
            "meta": (META,),
            "OpenAPI": (OPENAPI,),
        },
    ),
    (
        "elicitation (form: accept, decline)",
        _relayed(
            ("test_form_elicitation_accepted_and_declined", "test_a_2026_upstreams_question_reaches_the_client"),
            (INTERACTIVE,),
            NO_WAY_BACK,
            DIRECT_ELICITATION,
        ),
    ),
    (
        "elicitation (URL)",
        _relayed(("test_url_elicitation",), "the form's relay (not tested apart)", NO_WAY_BACK, DIRECT_ELICITATION),
    ),
    (
        "a client that cannot answer",
        _relayed(
            ("test_a_client_that_cannot_answer_is_told_what_the_tool_asked",),
            "the same relay (not tested apart)",
            "the refusal is the answer",
        ),
    ),
    (
        "sampling",
        _relayed(("test_sampling",), (INTERACTIVE,), "refused: there is no model behind OpenAPI", DIRECT_SAMPLING),
    ),
    (
        "progress",
        _relayed(
            ("test_progress_reaches_the_clients_token",),
            (INTERACTIVE,),
            "not carried: one HTTP answer per call",
            DIRECT_SAMPLING,
        ),
    ),
    (
        "cancellation",
        _relayed(
            ("test_cancellation_reaches_the_upstream",),
            "the same call path (not tested apart)",
            "not carried: a closed HTTP request does not cancel the call",
        ),
    ),
    (
        "logging",
        _relayed(
            ("test_upstream_logs_reach_clients_that_asked",),
            "the same relay (not tested apart)",
            "not carried: one HTTP answer per call",
        ),
    ),
    (
        "list changes",
        _relayed(
            ("test_a_tool_list_change_rebuilds_the_tree_and_tells_the_client",),
            "the same tree (not tested apart)",
            "the next call sees the rebuilt tree",
        ),
    ),
    (
        "tasks (taskSupport required)",
        _relayed(
            ("test_a_task_only_tool_runs_as_a_task_with_progress_and_its_question",),
            (INTERACTIVE,),
            "runs as a task, answers like any command (not tested apart)",
        ),
    ),
]


def outcomes() -> dict[str, bool]:
    """Each test of FILES by its id (`test_x[legacy]`): whether it passed; run in a pytest of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        subprocess.run(
            [sys.executable, "-m", "pytest", *FILES, "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        cases = ElementTree.parse(report).getroot().iter("testcase")
        return {c.attrib["name"]: not any(x.tag in ("failure", "error", "skipped") for x in c) for c in cases}


def _cell(backing: Cell, era: str, passed: dict[str, bool]) -> str:
    if isinstance(backing, str):
        return backing
    found = [
        next((passed[f"{name}[{e}]"] for e in ERAS.get(era, ()) if f"{name}[{e}]" in passed), passed.get(name))
        for name in backing
    ]
    if any(ok is None for ok in found):
        return "not measured (a test did not run)"
    return "pass" if all(found) else "FAIL"


def lines(passed: dict[str, bool]) -> tuple[list[str], str]:
    """The table, the tests behind each row, and a target line."""
    heads = [f"{path}, {era}" for path in PATHS[:-1] for era in ERAS] + [PATHS[-1]]
    out = ["| feature | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    cells: list[str] = []
    for feature, backing in ROWS:
        row = [_cell(backing[path], era, passed) for path in PATHS[:-1] for era in ERAS]
        row.append(_cell(backing["OpenAPI"], "", passed))
        cells += row
        out.append(f"| {feature} | " + " | ".join(row) + " |")
    out += ["", *[f"- {note}." for note in NOTES]]
    out += ["", f"Tests (in {' and '.join(f'`{f}`' for f in FILES)}; a parametrized one runs once per era):", ""]
    for feature, backing in ROWS:
        named = [f"{path}: " + ", ".join(f"`{t}`" for t in b) for path, b in backing.items() if not isinstance(b, str)]
        if named:
            out.append(f"- {feature}: " + "; ".join(named))
    measured = [c for c in cells if c in ("pass", "FAIL")]
    good = measured.count("pass")
    verdict = "pass" if good == len(measured) else "MISSED"
    return out, f"- conformance: {good} of {len(measured)} measured cells pass -- {verdict}"


def run() -> tuple[list[str], str]:
    return lines(outcomes())


if __name__ == "__main__":
    table, target = run()
    print("\n".join(table) + "\n\n" + target)
