"""Run every benchmark on this machine and write bench/RESULTS.md (and the token plot): `python -m bench`.

`--quick` is a smoke run (few rounds, small sets) that prints the tables and writes nothing. `--only PART,...` runs
those parts alone (PARTS) and writes nothing either. A part that fails (a server that did not answer on a busy
machine) is reported as not measured, with why, and the rest still runs.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from . import (
    busy,
    conformance,
    context,
    corpora,
    crowded,
    daemon,
    domains,
    economy,
    hosts,
    install,
    mark,
    nofit,
    own_cache,
    pipeline,
    quality,
    reliability,
    runtime,
    scale,
    shapes,
    skill,
    surfaces,
    tasks,
    turns,
    wrap,
)

HERE = Path(__file__).resolve().parent
STRATEGIES = ("static", "meta-tools", "search-tool", "mcp-cli", "exported skill")
PATHS = ("meta-tools", "search-tool", "mcp-cli", "mcp-cli via search", "exported skill")
ROOT_HELP = {"crowded-70": 400, "synthetic-10000": 500}  # root help tokens, at most (issue 14)
# The parts, in the order they run: `pdf-help` is the PDF help path, the others are named after their modules
PARTS = ("runtime", "wrap", "skill", "install", "pipeline", "pdf-help", "economy", "surfaces", "quality", "shapes")
PARTS += (
    "turns",
    "domains",
    "nofit",
    "context",
    "scale",
    "reliability",
    "busy",
    "daemon",
    "conformance",
    "tasks",
    "hosts",
)
FASTMCP = {"recall@1": 0.745, "recall@5": 0.876, "mrr": 0.805}  # quoted from the project brief, not re-measured


def attempt(what: str, run: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, str]:
    """(what `run` returns, "") or (None, why it failed), told on stderr: a part that fails does not stop the rest.
    Each part has a tool-list cache of its own, so that no failure it remembers counts in another."""
    with own_cache():
        try:
            return run(*args, **kwargs), ""
        except Exception as exc:
            while getattr(exc, "exceptions", None):  # an exception group: its first member
                exc = exc.exceptions[0]
            why = f"{type(exc).__name__}: {str(exc).strip()}"
            if isinstance(exc, subprocess.CalledProcessError) and (exc.stderr or "").strip():
                why += f" ({str(exc.stderr).strip().splitlines()[-1]})"
            why = " ".join(why.split())[:300]
            print(f"{what}: not measured: {why}", file=sys.stderr)
            return None, why


def target_line(r: dict) -> str:
    """A measurement against its target, with a pass/fail mark; one not measured has missed it."""
    if "ours" not in r:
        return f"- {r['name']}: not measured ({r['failed']}) -- {mark(False)}"
    ratio = r["ours"] / r["baseline"]
    return f"- {r['name']}: {ratio:.3f}x <= {r['target']:.2f}x -- {mark(ratio <= r['target'] and not r.get('failed'))}"


def ratio_table(rows: list[dict]) -> list[str]:
    """Measurements side by side with their baseline, as ratios, with the target and a pass/fail mark."""
    lines = ["| measurement | mcp-cli | baseline | added | ratio | target | result |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ours" not in r:
            lines.append(f"| {r['name']} | not measured: {r['failed'].replace('|', '/')} | | | | | {mark(False)} |")
            continue
        ratio = r["ours"] / r["baseline"]
        target = f"<= {r['target']:.2f}x" if r["target"] is not None else "(info)"
        verdict = "" if r["target"] is None else mark(ratio <= r["target"] and not r.get("failed"))
        lines.append(
            f"| {r['name']} | {r['ours'] * 1000:.2f} ms | {r['baseline'] * 1000:.2f} ms "
            f"({r['baseline_name']}) | {(r['ours'] - r['baseline']) * 1000:+.2f} ms | {ratio:.3f}x | {target} "
            f"| {verdict} |"
        )
    return lines


def economy_tables(results: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(markdown lines, target lines) for the token economy of every corpus and size."""
    up = [
        "| corpus | tools | servers | root help | " + " | ".join(STRATEGIES) + " |",
        "|---|---|---|---|" + "---|" * len(STRATEGIES),
    ]
    for r in results:
        static = r["up_front"]["static"]
        cells = [
            f"{r['up_front'][s]:,}" + ("" if s == "static" else f" ({r['up_front'][s] / static:.4f}x)")
            for s in STRATEGIES
        ]
        up.append(
            f"| {r['corpus']} | {r['tools']:,} | {r['servers']} | {r['root_help']:,} | " + " | ".join(cells) + " |"
        )
    task = [
        "| corpus | tasks | " + " | ".join(f"{p} median / p95" for p in PATHS) + " |",
        "|---|---|" + "---|" * len(PATHS),
    ]
    for r in results:
        if r["tasks"]:
            static = r["up_front"]["static"]
            cells = [f"{r['median'][p]:,.0f} / {r['p95'][p]:,.0f} ({r['median'][p] / static:.3f}x)" for p in PATHS]
            task.append(f"| {r['corpus']} | {r['tasks']} | " + " | ".join(cells) + " |")
    targets = []
    worst = max(results, key=lambda r: r["up_front"]["mcp-cli"])
    targets.append(
        f"- up front <= 200 tokens at any size: largest {worst['up_front']['mcp-cli']} "
        f"({worst['corpus']}) -- {mark(worst['up_front']['mcp-cli'] <= 200)}"
    )
    for r in results:
        if r["corpus"] in ("boundary", "github"):
            for p, most in (("mcp-cli", 400), ("mcp-cli via search", 300)):
                ok = r["median"][p] <= most and r["p95"][p] <= 800
                targets.append(
                    f"- {r['corpus']}, {p} path: median {r['median'][p]:,.0f} <= {most} and p95 "
                    f"{r['p95'][p]:,.0f} <= 800 -- {mark(ok)}"
                )
    for r in results:
        most = ROOT_HELP.get(r["corpus"])
        if most:
            targets.append(
                f"- {r['corpus']} ({r['tools']:,} tools, {r['servers']} servers): root help "
                f"{r['root_help']:,} <= {most} -- {mark(r['root_help'] <= most)}"
            )
    for r in results:
        if r["tasks"]:
            best = min(r["median"]["mcp-cli"], r["median"]["mcp-cli via search"])
            targets.append(
                f"- {r['corpus']}: mcp-cli path (best of root walk and search, median {best:,.0f}) <= "
                f"meta-tools path ({r['median']['meta-tools']:,.0f}) -- "
                f"{mark(best <= r['median']['meta-tools'])}"
            )
    return ["### Up front", "", *up, "", "### Along a task (up-front definitions included)", "", *task], targets


def quality_lines(q: dict[str, Any]) -> tuple[list[str], list[str]]:
    ours, floor = q["ours"], q["substring"]
    lines = ["| search | Recall@1 | Recall@3 | Recall@5 | MRR |", "|---|---|---|---|---|"]
    rows = (
        ("mcp-cli search (BM25 + lexicon)", ours),
        ("  odd-numbered prompts (vocabulary revised on)", q["odd"]),
        ("  even-numbered prompts (held out)", q["even"]),
        *(
            [("mcp-cli search + WordLlama embeddings (MCP_CLI_EMBEDDINGS=wordllama)", q["semantic"])]
            if q["semantic"]
            else []
        ),
        ("substring match (floor)", floor),
    )
    for name, m in rows:
        lines.append(f"| {name} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | {m['recall@5']:.3f} | {m['mrr']:.3f} |")
    peer = "FastMCP BM25 search transform (quoted from the brief, not re-measured)"
    lines.append(f"| {peer} | {FASTMCP['recall@1']:.3f} | - | {FASTMCP['recall@5']:.3f} | {FASTMCP['mrr']:.3f} |")
    lines += [
        "",
        f"Cost of a search result: {q['tokens_per_result']:.1f} o200k tokens each (a path and a one-line "
        "summary; the first's usage line shared by the results included), vs ~390 for a FastMCP search result "
        "(quoted from the brief).",
    ]
    lines += ["", f"Prompts whose tool is not in the top 5 ({len(q['misses'])} of {q['prompts']}):", ""]
    lines += [
        f'- "{m["prompt"]}" -> expected `{m["expected"]}`, rank {m["rank"] or ">50"}; top: '
        + ", ".join(f"`{t}`" for t in m["top"])
        for m in q["misses"]
    ]
    targets = [
        f"- search {key} >= {least:.2f}: {ours[key]:.3f} -- {mark(ours[key] >= least)}"
        for key, least in q["targets"].items()
    ]
    return lines, targets


def scale_lines(rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    lines = [
        "| tools | tree build | peak memory | root help | first search (index) | search | root help tokens |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['tools']:,} | {r['build_s']:.2f} s | {r['peak_mb']:.1f} MB | {r['root_help_s'] * 1000:.3f} ms "
            f"| {r['index_s'] * 1000:.1f} ms | {r['search_s'] * 1000:.3f} ms | {r['root_help_tokens']:,} |"
        )
    big = next((r for r in rows if r["tools"] == 10000), rows[-1])
    targets = [
        f"- {big['tools']:,}-tool root help <= 5 ms: {big['root_help_s'] * 1000:.3f} ms -- "
        f"{mark(big['root_help_s'] <= 0.005)}",
        f"- {big['tools']:,}-tool search <= 20 ms: {big['search_s'] * 1000:.3f} ms -- {mark(big['search_s'] <= 0.020)}",
    ]
    return lines, targets


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sized = sorted((r for r in results if r["corpus"].startswith("synthetic")), key=lambda r: r["tools"])
    xs = [r["tools"] for r in sized]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for s in STRATEGIES:
        left.plot(xs, [r["up_front"][s] for r in sized], marker="o", label=s)
    for p in PATHS:
        right.plot(xs, [r["median"][p] for r in sized], marker="o", label=p)
    right.plot(xs, [r["up_front"]["static"] for r in sized], marker="o", linestyle="--", label="static (all tools)")
    for ax, title in ((left, "Tokens read up front"), (right, "Tokens along a task (median)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tools")
        ax.set_ylabel("o200k tokens")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def parts(text: str) -> frozenset[str]:
    """`--only`'s value: part names, comma-separated, each one of PARTS."""
    named = frozenset(p.strip() for p in text.split(",") if p.strip())
    unknown = sorted(named - set(PARTS))
    if unknown or not named:
        raise argparse.ArgumentTypeError(f"unknown part {', '.join(unknown) or '(none)'}; parts: {', '.join(PARTS)}")
    return named


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smoke run: fewer rounds and sizes; writes nothing")
    ap.add_argument(
        "--only", type=parts, metavar="PART,...", help=f"only these parts, writing nothing: {', '.join(PARTS)}"
    )
    args = ap.parse_args()
    quick = args.quick

    def wanted(part: str) -> bool:
        return args.only is None or part in args.only

    sections: list[tuple[str, str, list[str]]] = []
    targets: list[str] = []

    for module in (runtime, wrap, skill, install, pipeline):
        if not wanted(module.__name__.rpartition(".")[2]):
            continue
        title, _, about = module.__doc__.strip().partition("\n\n")
        name = title.split(":")[0]
        rows, why = attempt(name, module.run, quick=quick)
        rows = rows or [{"name": name, "failed": why, "target": None}]
        sections.append((name, about, ratio_table(rows)))
        targets += [target_line(r) for r in rows if r["target"] is not None or "ours" not in r]

    if wanted("pdf-help"):
        total, steps = skill.help_path()
        about = "Tokens an agent reads to reach `pdf text extract`, next to the seed's hand-made pdf tool (202 + 310)."
        rows = [f"| {step} | {n} |" for step, n in steps]
        rows.append(f"| total | {total} ({total / skill.SEED_PATH:.2f}x of the seed's {skill.SEED_PATH}) |")
        sections.append(("PDF help path", about, ["| step | tokens |", "|---|---|", *rows]))
        targets.append(
            f"- pdf help path smaller than the seed's: {total} < {skill.SEED_PATH} -- {mark(total < skill.SEED_PATH)}"
        )

    sizes = (25, 100) if quick else corpora.SIZES
    task_cap = 20 if quick else None
    results = []
    if wanted("economy"):
        sets = [corpora.boundary(), corpora.github(), corpora.progressive(), crowded.crowded()]
        sets += [corpora.synthetic(n) for n in sizes]
        for corpus in sets:
            if corpus.name.startswith("synthetic") and len(corpus.tasks) > 200:
                corpus.tasks = random.Random(corpora.SEED).sample(corpus.tasks, 200)
            results.append(economy.run(corpus, task_cap))
        lines, more = economy_tables(results)
        sections.append(("Token economy", economy.__doc__.strip().split("\n", 1)[1].strip(), lines))
        targets += more

    firsts = [corpora.boundary(), corpora.github(), corpora.progressive()]
    if wanted("surfaces"):
        lines = surfaces.table([surfaces.run(c, task_cap) for c in firsts])
        sections.append(("Surfaces", surfaces.__doc__.strip().split("\n", 1)[1].strip(), lines))

    if wanted("quality"):
        lines, more = quality_lines(quality.run(corpora.boundary()))
        sections.append(("Search quality", quality.__doc__.strip(), lines))
        targets += more

    if wanted("shapes"):
        lines, more = shapes.report(firsts)
        sections.append(("Option shapes", shapes.__doc__.strip().split("\n\n")[0], lines))
        targets += more
    if wanted("turns"):
        lines, more = turns.report(firsts)
        sections.append(("Calls per task", turns.__doc__.strip().rsplit("\n", 1)[0], lines))
        targets += more
    for module in (domains, nofit):
        if not wanted(module.__name__.rpartition(".")[2]):
            continue
        lines, more = module.report(module.run())
        title, _, about = module.__doc__.strip().partition(": ")
        sections.append((title, about[:1].upper() + about[1:], lines))
        targets += more

    if wanted("context"):
        sections.append(
            (
                "Context-driven disclosure",
                context.__doc__.strip(),
                context.report(context.run(corpora.boundary("ambiguous"))),
            )
        )

    if wanted("scale"):
        lines, more = scale_lines(scale.run((100, 1000) if quick else scale.SIZES, 5 if quick else 25))
        sections.append(("Scale", scale.__doc__.strip(), lines))
        targets += more

    if wanted("reliability"):
        checked, why = attempt("Reliability", reliability.run, 300 if quick else 2000, 10 if quick else 100)
        if checked:
            lines, more = reliability.report(checked)
        else:
            lines, more = [f"Not measured: {why}"], [target_line({"name": "reliability", "failed": why})]
        sections.append(("Reliability", reliability.__doc__.strip().split("\n\n")[1], lines))
        targets += more

    if wanted("busy"):
        measured, why = attempt("Busy upstream", busy.measure, 50 if quick else busy.SESSIONS)
        lines = busy.report({"now": measured}) if measured else [f"Not measured: {why}"]
        sections.append(("Busy upstream", busy.__doc__.strip().split("\n\n")[0], lines))
        kept = bool(measured) and measured["lost"] == 0 and not measured["stopped"]
        targets.append(f"- busy upstream: 0 calls lost, the upstream never stopped -- {mark(kept)}")
    if wanted("daemon"):
        measured, why = attempt("Keep-alive daemon", daemon.measure, quick)
        lines, more = (
            daemon.report(measured) if measured else ([f"Not measured: {why}"], [f"- daemon: not measured: {why}"])
        )
        title, _, about = daemon.__doc__.strip().partition("\n\n")
        sections.append((title.split(":")[0], about, lines))
        targets += more
    if wanted("conformance"):
        found, why = attempt("Conformance", conformance.run)
        lines, more = found or ([f"Not measured: {why}"], f"- conformance: not measured: {why}")
        title, _, about = conformance.__doc__.strip().partition("\n\n")
        sections.append((title, about, lines))
        targets.append(more)
    if wanted("tasks"):
        found, why = attempt("Tasks", tasks.run, quick)
        lines, more = tasks.report(found) if found else ([f"Not measured: {why}"], [f"- tasks: not measured: {why}"])
        sections.append((tasks.TITLE, tasks.__doc__.strip().split("\n\n", 1)[1].strip(), lines))
        targets += more

    if not quick and wanted("hosts"):  # real hosts, a minute or two: `python -m bench.hosts` alone
        found, why = attempt("Hosts", hosts.run)
        sections.append(("Hosts", hosts.__doc__.strip(), hosts.report(found) if found else [f"Not measured: {why}"]))
    for title, _, lines in sections:
        print(f"## {title}\n\n" + "\n".join(lines) + "\n")
    print("## Targets\n\n" + "\n".join(targets))
    if quick or args.only is not None:
        return
    plot(results, HERE / "tokens_vs_size.png")
    out = [
        "# Benchmark results",
        "",
        f"Produced by `python -m bench` on {datetime.date.today().isoformat()}, in one run on one machine: "
        f"{os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}, mcp {version('mcp')}, "
        f"tiktoken {version('tiktoken')} (o200k_base). Ratios are mcp-cli / baseline; lower is better.",
        "",
        "## Targets",
        "",
        *targets,
        "",
    ]
    for title, about, lines in sections:
        out += [f"## {title}", "", about, "", *lines, ""]
    out += ["![tokens vs toolset size](tokens_vs_size.png)", ""]
    (HERE / "RESULTS.md").write_text("\n".join(out), encoding="utf-8")
    print(f"\nwrote {HERE / 'RESULTS.md'} and {HERE / 'tokens_vs_size.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
