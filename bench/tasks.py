"""Tasks on real servers: tokens that reach the agent, plain calls vs filtered calls vs one pipeline.

Four real MCP servers holding real data, started by the bench: `@modelcontextprotocol/server-filesystem` over the
installed `mcp` SDK's source, `mcp-server-git` over this repository's history, `@modelcontextprotocol/server-memory`
holding a generated graph of 600 people and 40 projects, and `mcp-server-sqlite` (run by uvx beside an `mcp` of
before 2, which it needs) over a shop database of 13,200 rows. Each task has a scripted plan in three forms: plain
calls (each answer whole, as a static tool gives it), calls with filters (narrower arguments, `--budget`,
`--format`), and one pipeline (`|` stages: `jq`, `head`). Tokens are o200k_base counts of the text each answer
puts before the agent; the static-tools baseline is every tool definition of the four servers plus the plain
answers; a pipeline that fails is a row that says why. `python -m bench.tasks` runs this part alone and rewrites
its section of RESULTS.md.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from mcp_cli.cli.tokens import count, static_tool, tool_json
from mcp_cli.engine import answers
from mcp_cli.handlers import CallScope
from mcp_cli.result import tokens
from mcp_cli.tree import Command

from . import mark, own_cache

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
SDK = Path(importlib.util.find_spec("mcp").origin or "").parent  # type: ignore[union-attr]
PEOPLE, PROJECTS = 600, 40
FILTERED_TARGET, PIPELINE_TARGET = 0.30, 1.5
STARTUP = 180.0  # seconds each server may take to list its tools (uvx may build an environment first)


@dataclass
class Task:
    name: str
    plain: list[str]
    filtered: list[str]
    pipeline: str
    measured: dict[str, Any] = field(default_factory=dict)


def tasks(repo: Path) -> list[Task]:
    """The scripted plans over the SDK's folder and the repository `repo`."""
    f, r, q = str(SDK), str(repo), "sql read-query --query"
    session, stream = f"files read-text-file --path {f}/client/session.py", f"{f}/server/streamable_http.py"
    tree, find = f"files directory-tree --path {f}", f"files search-files --path {f} --pattern"
    folders = '[.[] | select(.type == "directory") | {name, entries: (.children | length)}]'
    log, diff = f"git log --repo-path {r}", f"git diff --repo-path {r}"
    show = f"git show --repo-path {r} --revision HEAD"
    graph = "memory read-graph"
    revenue = (
        "select p.category, round(sum(o.quantity * p.price), 2) as revenue from orders o "
        "join products p on p.id = o.product_id group by p.category"
    )
    busiest = (
        "select c.name, count(*) as n from orders o join customers c on c.id = o.customer_id "
        "group by c.id order by n desc"
    )
    returned = (
        "select o.id, o.ordered, c.city from orders o join customers c on c.id = o.customer_id "
        "where o.status = 'returned'"
    )
    return [
        Task(
            "files: read how ClientSession starts",
            [f"{find} **/session.py", session],
            [f"{find} **/session.py", f"{session} --head 80"],
            f"{session} | head 80",
        ),
        Task(
            "files: which folders of the SDK hold the most entries",
            [tree],
            [f"files list-directory --path {f}", f"files list-directory --path {f}/server"],
            f"{tree} | jq '{folders}'",
        ),
        Task(
            "files: find the streamable HTTP transport and read its start",
            [tree, f"files read-text-file --path {stream}"],
            [f"{find} **/*streamable*", f"files read-text-file --path {stream} --head 60"],
            f"files read-text-file --path {stream} | head 60",
        ),
        Task(
            "git: who changed what in the last 20 commits",
            [f"{log} --max-count 400"],
            [f"{log} --max-count 20"],
            f"{log} --max-count 400 | head 120",
        ),
        Task("git: what the latest commit changed", [show], [f"--budget 1500 {show}"], f"{show} | head 60"),
        Task(
            "git: the changes of the last 10 commits, briefly",
            [f"{diff} --target HEAD~10"],
            [f"--budget 3000 {diff} --target HEAD~10 --context-lines 0"],
            f"{diff} --target HEAD~10 --context-lines 0 | head 150",
        ),
        Task(
            "memory: who works on project-07",
            [graph],
            ["memory search-nodes --query project-07"],
            f"{graph} | jq '[.relations[] | select(.to == \"project-07\") | .from]'",
        ),
        Task(
            "memory: whom person-042 knows, and about them",
            [graph],
            ["memory open-nodes --names person-042"],
            f"{graph} | jq '[.relations[] | select(.from == \"person-042\")]'",
        ),
        Task(
            "memory: how many entities of each type",
            [graph],
            [f"--budget 2000 --format toon {graph}"],
            f"{graph} | jq '.entities | group_by(.entityType) | map({{type: .[0].entityType, n: length}})'",
        ),
        Task(
            "sql: revenue per product category",
            ["sql list-tables", f"{q} 'select * from orders'", f"{q} 'select * from products'"],
            ["sql describe-table --table-name orders", f"{q} '{revenue}'"],
            f"{q} '{revenue}' | head 10",
        ),
        Task(
            "sql: the ten customers with the most orders",
            [f"{q} 'select * from orders'", f"{q} 'select * from customers'"],
            [f"{q} '{busiest} limit 10'"],
            f"{q} '{busiest}' | head 10",
        ),
        Task(
            "sql: returned orders from Oslo",
            [
                "sql list-tables",
                "sql describe-table --table-name orders",
                "sql describe-table --table-name customers",
                f"{q} \"select * from orders where status = 'returned'\"",
                f"{q} 'select * from customers'",
            ],
            ["sql describe-table --table-name orders", f"--budget 2000 {q} \"{returned} and c.city = 'Oslo'\""],
            f'{q} "{returned}" | head 40',
        ),
    ]


def memory_graph(path: Path) -> None:
    """server-memory's store: PEOPLE people and PROJECTS projects, each person working on one, knowing two."""
    rng = random.Random(27)
    lines: list[dict[str, Any]] = []
    for p in range(PROJECTS):
        said = [f"started {2015 + p % 10}", f"language {rng.choice(['Go', 'Python', 'Rust'])}"]
        lines.append({"type": "entity", "name": f"project-{p:02}", "entityType": "project", "observations": said})
    for i in range(PEOPLE):
        role, city = rng.choice(["engineer", "designer", "manager"]), rng.choice(["Oslo", "Lima", "Kyoto"])
        said = [f"role {role}", f"city {city}"]
        lines.append({"type": "entity", "name": f"person-{i:03}", "entityType": "person", "observations": said})
        lines.append(
            {
                "type": "relation",
                "from": f"person-{i:03}",
                "to": f"project-{rng.randrange(PROJECTS):02}",
                "relationType": "works_on",
            }
        )
        for other in rng.sample(range(PEOPLE), 2):
            knows = {"from": f"person-{i:03}", "to": f"person-{other:03}", "relationType": "knows"}
            lines.append({"type": "relation", **knows})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def shop(path: Path) -> int:
    """A shop database: 1,000 customers, 200 products, 12,000 orders; the number of rows."""
    rng = random.Random(27)
    db = sqlite3.connect(path)
    db.executescript(
        "create table customers(id integer primary key, name text, city text, joined text);"
        "create table products(id integer primary key, name text, category text, price real);"
        "create table orders(id integer primary key, customer_id integer, product_id integer, quantity integer,"
        " ordered text, status text);"
    )
    cities = ["Lisbon", "Oslo", "Kyoto", "Lima", "Accra", "Perth", "Quebec", "Tartu"]
    kinds, states = ["tools", "books", "garden", "toys", "food"], ["paid", "shipped", "returned", "open"]
    customers = [(i, f"Customer {i}", rng.choice(cities), f"20{rng.randint(15, 24)}-01-01") for i in range(1, 1001)]
    products = [(i, f"Product {i}", rng.choice(kinds), round(rng.uniform(2, 300), 2)) for i in range(1, 201)]
    orders = [
        (
            i,
            rng.randint(1, 1000),
            rng.randint(1, 200),
            rng.randint(1, 5),
            f"2024-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}",
            rng.choice(states),
        )
        for i in range(1, 12001)
    ]
    db.executemany("insert into customers values(?,?,?,?)", customers)
    db.executemany("insert into products values(?,?,?,?)", products)
    db.executemany("insert into orders values(?,?,?,?,?,?)", orders)
    db.commit()
    db.close()
    return 1000 + 200 + 12000


def config(folder: Path) -> Path:
    memory_graph(folder / "memory.jsonl")
    shop(folder / "shop.db")
    uvx = shutil.which("uvx") or "uvx"
    store = folder / "memory.jsonl"
    sqlite = ["--quiet", "--with", "mcp<2", "mcp-server-sqlite", "--db-path", str(folder / "shop.db")]
    servers = {
        "files": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(SDK)]},
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(ROOT)]},
        "memory": {"command": str(NODE_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(store)}},
        "sql": {"command": uvx, "args": sqlite},
    }
    path = folder / "work.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def split(call: str) -> list[str]:
    """A call's tokens as the one tool's `command` gives them (a lone `|` stays a pipe)."""
    import shlex

    return shlex.split(call)


def own_answer(whole: str, stage: str) -> str | None:
    """The final stage's own answer, run here on the first stage's whole output (`head N`, `jq FILTER`)."""
    words = split(stage)
    if words[0] == "head":
        return "\n".join(whole.split("\n")[: int(words[1])])
    if words[0] == "jq":
        import jq

        return json.dumps(jq.compile(words[1]).input_value(json.loads(whole)).all()[0], ensure_ascii=False)
    return None


def has_note(text: str) -> bool:
    return bool(re.search(r"\[(cut to the|whole answer|[a-z]+ [\d,]+-[\d,]+ of [\d,]+: the end)", text))


async def measure(config_path: Path, plans: list[Task], budget: int) -> dict[str, Any]:
    from mcp_cli.engine import pipeline
    from mcp_cli.engine.pipeline import split_argv, split_command
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources.loader import load

    tree = load(str(config_path), startup=STARTUP)
    missing = [n.name for n in tree.root.children if n.summary.startswith("Unavailable")]
    if missing:
        raise RuntimeError(f"servers that did not list their tools: {', '.join(missing)}")
    commands = [(p, n) for p, n in tree.walk() if isinstance(n, Command) and n.handler.tool is not None]
    definitions = count(tool_json([static_tool(p, n) for p, n in commands]))
    tree.settings.budget = budget
    over: list[str] = []
    async with Runtime(tree) as runtime:

        async def answer(call: str, whole: bool = False) -> str:
            tokens = split(call)
            result = await (
                pipeline.run(runtime.commands, split_argv(tokens), CallScope()) if whole else runtime.call(tokens)
            )
            if not result.ok:
                raise RuntimeError(f"`{call}` failed: {result.text()[:300]}")
            text = result.text()
            if not whole and count(text) > budget and not has_note(text):
                over.append(call)
            return text

        for task in plans:
            m = task.measured
            m["plain"] = sum([count(await answer(c, whole=True)) for c in task.plain])
            m["filtered"] = sum([count(await answer(c)) for c in task.filtered])
            m["budgeted"] = max([count(await answer(c)) for c in task.plain])  # plain calls, under the budget
            stages = [stage.strip() for stage in split_command(task.pipeline) or [task.pipeline]]
            try:  # a pipeline that fails is a row that says why, not a part that fails
                m["pipeline"] = count(await answer(task.pipeline))
            except RuntimeError as exc:
                m["pipeline_failed"] = " ".join(str(exc).split())[:160]
                continue
            own = own_answer(await answer(stages[0], whole=True), stages[-1])
            m["final_stage"] = count(own) if own is not None else None
    return {"definitions": definitions, "over": over, "tasks": plans}


def forms(config_path: Path) -> list[tuple[str, dict[str, int]]]:
    """o200k tokens of real JSON answers as JSON (as the server wrote it, and compact), TOON and a table; TOON is
    checked to decode to the same value."""
    import toon_format

    from mcp_cli.engine import pipeline
    from mcp_cli.engine.pipeline import split_argv
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources.loader import load

    tree = load(str(config_path), startup=STARTUP)
    calls = {
        "memory read-graph (640 entities, 1,800 relations)": "memory read-graph",
        "memory search-nodes project-0 (nodes and relations)": "memory search-nodes --query project-0",
        "files directory-tree of the SDK (nested)": f"files directory-tree --path {SDK}",
        "files list-allowed-directories": "files list-allowed-directories",
    }
    out: list[tuple[str, dict[str, int]]] = []

    async def run() -> None:
        async with Runtime(tree) as runtime:
            for label, call in calls.items():
                text = (await pipeline.run(runtime.commands, split_argv(split(call)), CallScope())).output
                try:
                    value = json.loads(text)
                except ValueError:
                    continue
                assert toon_format.decode(toon_format.encode(value)) == value, f"TOON of {label} is not lossless"
                out.append((label, sizes(value, text, answers.compactable(value))))
                if isinstance(value, dict):  # each array on its own: where forms differ most
                    for key, items in value.items():
                        if isinstance(items, list) and len(items) > 1:
                            written = json.dumps(items, indent=2, ensure_ascii=False)
                            out.append((f"  its `{key}` alone", sizes(items, written, answers.tabular(items))))

    anyio.run(run)
    return out


def sizes(value: Any, written: str, tabular: bool) -> dict[str, int]:
    """o200k tokens of a JSON value as written, compact, as TOON and as a table; and whether it is tabular."""
    import toon_format

    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    toon = toon_format.encode(value)
    table = answers.table(value)
    return {
        "as written": count(written),
        "compact JSON": count(compact),
        "TOON": count(toon),
        "table": count(table),
        "tabular": int(tabular),
        "estimate/TOON": round(100 * tokens(toon) / count(toon)),
    }


def run(quick: bool = False) -> dict[str, Any]:
    with own_cache(), tempfile.TemporaryDirectory() as tmp:
        path = config(Path(tmp))
        plans = tasks(ROOT)[:4] if quick else tasks(ROOT)
        result = anyio.run(measure, path, plans, answers_budget())
        result["forms"] = forms(path)
        return result


def answers_budget() -> int:
    from mcp_cli.tree import Settings

    return Settings().budget


def report(r: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The table and the target lines."""
    lines = [
        f"Budget {answers_budget():,} tokens. Definitions of the four servers' tools: {r['definitions']:,} tokens "
        "(the static baseline pays them up front, then every plain answer whole). `budgeted`: the biggest plain "
        "answer as mcp-cli gives it by default (cut to the budget, the rest a `--more` call away).",
        "",
        "| task | static baseline | plain | budgeted (max) | filtered | filtered/plain | pipeline | final stage "
        "| pipeline/final |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios, pipe_ratios = [], []
    for t in r["tasks"]:
        m = t.measured
        ratio = m["filtered"] / m["plain"]
        ratios.append(ratio)
        if "pipeline_failed" in m:
            pipe = f"failed: {m['pipeline_failed'].replace('|', '/')} | | "
        else:
            own = m.get("final_stage")
            pr = m["pipeline"] / own if own else None
            if pr is not None:
                pipe_ratios.append(pr)
            pipe = f"{m['pipeline']:,} | {own if own is not None else 'n/a'} | {f'{pr:.2f}x' if pr else 'n/a'}"
        lines.append(
            f"| {t.name} | {r['definitions'] + m['plain']:,} | {m['plain']:,} | {m['budgeted']:,} | "
            f"{m['filtered']:,} | {ratio:.3f} | {pipe} |"
        )
    med = statistics.median(ratios)
    lines += ["", f"Median filtered/plain: {med:.3f}."]
    lines += [
        "",
        "Compact forms on real answers (o200k tokens; `tabular`: an array of objects with the same keys "
        "and scalar values, or an object holding one; `estimate`: mcp-cli's token estimate of the TOON "
        "as a percentage of its o200k count):",
        "",
        "| answer | as written | compact JSON | TOON | table | tabular | estimate |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, row in r["forms"]:
        lines.append(
            f"| {label} | {row['as written']:,} | {row['compact JSON']:,} | {row['TOON']:,} | "
            f"{row['table']:,} | {'yes' if row['tabular'] else 'no'} | {row['estimate/TOON']}% |"
        )
    targets = [
        f"- tasks: filtered median {med:.3f}x of plain <= {FILTERED_TARGET:.2f}x -- {mark(med <= FILTERED_TARGET)}",
        f"- tasks: no answer over the budget without a note ({len(r['over'])} found) -- {mark(not r['over'])}",
    ]
    if pipe_ratios:
        worst = max(pipe_ratios)
        targets.append(
            f"- tasks: a pipeline's answer at most {worst:.2f}x its final stage's <= {PIPELINE_TARGET}x -- "
            f"{mark(worst <= PIPELINE_TARGET)}"
        )
    else:
        targets.append("- tasks: pipeline vs final stage: not measured (no pipelines in this build)")
    return lines, targets


TITLE = "Tasks on real servers"


def main() -> None:
    """Run this part alone and put its section (and target lines) into RESULTS.md."""
    lines, targets = report(run())
    about = __doc__.strip().split("\n\n", 1)[1].strip()
    section = f"## {TITLE}\n\n{about}\n\n" + "\n".join(lines) + "\n\n" + "\n".join(targets) + "\n"
    print(section)
    results = HERE / "RESULTS.md"
    text = results.read_text(encoding="utf-8")
    found = re.search(rf"^## {TITLE}\n.*?(?=^## |\Z)", text, re.M | re.S)
    if found:
        text = text[: found.start()] + section + "\n" + text[found.end() :]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    text = re.sub(r"^- tasks: .*\n", "", text, flags=re.M)  # this part's targets, in the list at the top again
    text = text.replace("## Targets\n\n", "## Targets\n\n" + "".join(t + "\n" for t in targets), 1)
    results.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
