"""The benchmark suite's pieces: corpus converters, strategy builders, recall maths, and a smoke run."""

import json
import re
import subprocess
import sys

import pytest

from bench import context, corpora, economy, quality
from mcp_cli.cli import tokens

from .conftest import ROOT, budget


def test_boundary_shorthand_becomes_json_schema():
    params = {
        "owner": {"type": "string", "required": True, "description": "Repository owner"},
        "limit": {"type": "integer", "required": False},
        "tags": {"type": "array"},
        "odd": {"type": "weird"},
        "bare": None,
    }
    assert corpora.boundary_schema(params) == {
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "limit": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "odd": {"type": "string"},
            "bare": {"type": "string"},
        },
        "required": ["owner"],
    }
    assert corpora.boundary_schema(None) == {"type": "object", "properties": {}}


def test_corpora_sizes():
    b, g, p = corpora.boundary(), corpora.github(), corpora.progressive()
    assert (len(b.tools), len(b.tasks), len(b.servers)) == (150, 161, 16)
    assert len(g.tools) == 117 and all("_snap" not in t for t in g.tools)
    assert (len(p.tools), len(p.tasks), len(p.servers)) == (104, 20, 15)
    known = {(s, t["name"]) for s, ts in b.servers for t in ts}
    assert all(pair in known for _, needed in b.tasks for pair in needed)


@pytest.mark.parametrize("size", [25, 500, 1000])
def test_synthetic_sets_are_exact_and_reproducible(size):
    one, two = corpora.synthetic(size), corpora.synthetic(size)
    assert len(one.tools) == size
    assert one.servers == two.servers
    pairs = [(s, t["name"]) for s, ts in one.servers for t in ts]
    assert len(set(pairs)) == size  # copies live on replica servers, never twice on one


def test_strategies_count_what_a_client_receives():
    import anyio
    from mcp import Client

    from mcp_cli.surfaces.mcp_server import build

    corpus = corpora.boundary()
    paths = economy.Paths(corpus)

    async def served():
        async with Client(build(paths.runtime)) as client:
            listed = (await client.list_tools()).tools[0].model_dump(by_alias=True, exclude_none=True, mode="json")
            result = await client.call_tool("tools", {"argv": ["github", "create-issue", "--help"]})
            return listed, result.content[0].text

    listed, help_text = anyio.run(served)
    assert paths.up["mcp-cli"] == tokens.count(tokens.tool_json([listed]))
    assert help_text == paths.help(["github", "create-issue", "--help"])
    assert paths.up["static"] == tokens.count(
        json.dumps(
            {
                "tools": [
                    {k: v for k, v in t.items() if k in ("name", "description", "inputSchema")} for t in corpus.tools
                ]
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )
    )
    assert paths.up["meta-tools"] == tokens.count(tokens.tool_json(economy.META_TOOLS))
    task = paths.task("Create an issue in the platform repo", [("github", "github_create_issue")])
    assert task["mcp-cli"] > paths.up["mcp-cli"] + tokens.count(help_text)
    assert set(task) == {"meta-tools", "search-tool", "mcp-cli", "mcp-cli via search", "exported skill"}
    # The exported skill: its frontmatter up front; along a task its body and the same help walk as the tool's.
    assert paths.up["exported skill"] == paths.skill_front > 0 and paths.skill_body > 0
    walk = task["mcp-cli"] - paths.up["mcp-cli"]
    assert task["exported skill"] == paths.skill_front + paths.skill_body + walk


def test_recall_and_mrr_on_a_tiny_case():
    m = quality.metrics([1, 2, None, 6])
    assert m == {"recall@1": 0.25, "recall@3": 0.5, "recall@5": 0.5, "mrr": pytest.approx((1 + 0.5 + 1 / 6) / 4)}


def test_each_context_call_of_the_context_bench_reaches_its_command_and_names_one_entity():
    ambiguous = corpora.boundary("ambiguous")
    assert len(ambiguous.tasks) == 32
    rows = context.run(ambiguous)["rows"]
    made = [r for r in rows if r["call"]]
    assert len(made) >= 30 and all(len(r["recorded"]) == 1 for r in made)
    assert all(r["call"].split()[0] == r["expected"].split("_")[0] for r in made)  # the expected tool's service


# The parts of the quick smoke run: what the suite gates (search recall on Boundary, the pipeline built-ins, the PDF
# help path) and the parts that run in this process. The others time real servers, and a failure of theirs is only
# reported ("not measured"), never failed on: `python -m bench --quick` runs them all.
SMOKE = "pipeline,pdf-help,economy,surfaces,quality,shapes,turns,domains,nofit,context,scale"


def test_quick_smoke_run_of_the_gated_parts():
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", SMOKE],
        capture_output=True,
        text=True,
        timeout=budget(900),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    headings = ("## Pipeline built-ins", "## PDF help path", "## Token economy", "## Search quality", "## Scale")
    for heading in (*headings, "## Context-driven disclosure", "## Targets"):
        assert heading in proc.stdout
    assert "## Reliability" not in proc.stdout  # the parts not named are not run
    search = re.findall(r"^- search (\S+) >= (\S+): (\S+) -- (\w+)$", proc.stdout, re.M)
    assert {key for key, *_ in search} == set(quality.TARGETS)
    for key, least, got, mark in search:
        assert float(got) >= float(least) and mark == "pass", (key, got, least)
    assert re.search(r"^- pdf help path smaller than the seed's: \d+ < \d+ -- pass$", proc.stdout, re.M)
    pipeline = re.findall(r"^- (`[^`]+` after a|fitting) .*: (\S+)x <= \S+x -- \w+$", proc.stdout, re.M)
    assert len(pipeline) >= 10 and "not measured" not in proc.stdout, proc.stdout[-3000:]  # every row measured


def test_only_names_known_parts():
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--only", "pipeline,nope"], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 2 and "unknown part nope; parts: runtime, wrap" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_crowded_config_is_realistic_and_reproducible():
    from bench.crowded import POOR_KEYS, crowded

    one = crowded()
    assert (len(one.tools), len(one.servers)) == (500, 70) and one.servers == crowded().servers
    keys = {s for s, _ in one.servers}
    assert set(POOR_KEYS) <= keys and {"slack", "discord", "jira", "linear"} & keys  # poor keys, look-alikes
    assert any(not t["description"] for t in one.tools)
    assert any("\u4e00" <= ch <= "\u9fff" for t in one.tools for ch in t["description"])  # Chinese descriptions


def test_the_walk_skips_a_hop_only_where_a_help_named_the_path():
    listing = "Groups:\n  gists  create, get, list.\n  issues  Issues, comments.\n"
    assert economy.named(listing, ["gists", "create"])  # a row listing its commands by name
    assert economy.named("  secrets  1password, vault.\n", ["secrets", "1password"])  # or servers, a digit first
    assert not economy.named(listing, ["issues", "comments"])  # a row of topics (capitalised) names no path
    assert not economy.named(listing, ["gists", "delete"])
    assert economy.named("  github issues create  Create an issue.\n", ["github", "issues", "create"])  # search
    paths = economy.Paths(corpora.github())
    # the tool's description names the github domain; the github listing names gists' commands
    assert "Run `github --help`" in paths.description
    walk = paths.walk([paths.where[("github", "create_gist")]])
    assert all(f"Usage:\n  tools {' '.join(path)} " in help for path, help in walk.items())  # each path's help
    assert list(walk) == [("github",), ("github", "gists", "create")]
    paths.description = "Run --help first."  # a description that names nothing: the root first
    assert list(paths.walk([paths.where[("github", "create_gist")]])) == [(), *walk]
