"""Run the benchmarks and write bench/RESULTS.md: `python -m bench [--quick]`."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path

from . import runtime, wrap

HERE = Path(__file__).resolve().parent


def _fmt(value: float, unit: str) -> str:
    return f"{value * 1000:.2f} ms" if unit == "s" else f"{value:,.0f} {unit}"


def table(rows: list[dict]) -> list[str]:
    lines = ["| measurement | mcp-cli | baseline | ratio | target | result |", "|---|---|---|---|---|---|"]
    for r in rows:
        r["ratio"] = r["ours"] / r["baseline"]
        target = f"<= {r['target']:.2f}x" if r["target"] is not None else "(info)"
        passed = r["ratio"] <= r["target"] and not r.get("failed") if r["target"] is not None else None
        verdict = "" if passed is None else ("pass" if passed else "MISSED")
        lines.append(
            f"| {r['name']} | {_fmt(r['ours'], r['unit'])} | {_fmt(r['baseline'], r['unit'])} ({r['baseline_name']}) "
            f"| {r['ratio']:.3f}x | {target} | {verdict} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run); results are not written")
    args = ap.parse_args()
    sections = [(module, table(module.run(quick=args.quick))) for module in (runtime, wrap)]
    for _, lines in sections:
        print("\n".join(lines) + "\n")
    if args.quick:
        return
    cmd = "python -m bench"
    out = [
        "# Benchmark results",
        "",
        f"Produced by `{cmd}` on {datetime.date.today().isoformat()}, on one machine in one run: "
        f"{os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}, mcp {version('mcp')}.",
        "Ratios are mcp-cli / baseline; lower is better.",
        "",
    ]
    for module, lines in sections:
        title, _, rest = module.__doc__.strip().partition("\n\n")
        out += [f"## {title.split(':')[0]}", "", title.split(":", 1)[-1].strip(), "", rest, "", *lines, ""]
    (HERE / "RESULTS.md").write_text("\n".join(out), encoding="utf-8")
    print(f"wrote {HERE / 'RESULTS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
