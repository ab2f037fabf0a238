"""Run the benchmarks and write bench/RESULTS.md: `python -m bench [--quick]`."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path

from . import runtime

HERE = Path(__file__).resolve().parent


def _fmt(value: float, unit: str) -> str:
    return f"{value * 1000:.2f} ms" if unit == "s" else f"{value:,.0f} {unit}"


def table(rows: list[dict]) -> list[str]:
    lines = ["| measurement | mcp-cli | baseline | ratio | target | result |", "|---|---|---|---|---|---|"]
    for r in rows:
        target = f"<= {r['target']:.2f}x" if r["target"] is not None else "(info)"
        verdict = "" if r["target"] is None else ("pass" if r["ratio"] <= r["target"] else "MISSED")
        lines.append(
            f"| {r['name']} | {_fmt(r['ours'], r['unit'])} | {_fmt(r['baseline'], r['unit'])} ({r['baseline_name']}) "
            f"| {r['ratio']:.3f}x | {target} | {verdict} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run); results are not written")
    args = ap.parse_args()
    rows = runtime.run(quick=args.quick)
    lines = table(rows)
    print("\n".join(lines))
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
        "## Runtime overhead",
        "",
        runtime.__doc__.strip(),
        "",
        *lines,
        "",
    ]
    (HERE / "RESULTS.md").write_text("\n".join(out), encoding="utf-8")
    print(f"wrote {HERE / 'RESULTS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
