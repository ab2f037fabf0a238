"""Install: `pip install ./NAME-mcp` into a fresh virtual environment, from the built folder alone.

- mcp-cli: `python -m pip install ./NAME-mcp` (the package with its copy of the runtime, and its dependencies);
- baseline: `python -m pip install` of the same dependencies by name, into another fresh environment.

Only the pip command is timed, with a warm pip cache (one untimed install of the package first); the difference
is mostly building the package's wheel (the build backend in an isolated environment).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SKILLS = [
    ("argtool", "test fixture", ROOT / "tests" / "fixtures" / "skills" / "argtool"),
    ("pdf", "bundled", ROOT / "skills" / "pdf"),
]


def pip_install(env: Path, *requirements: str, cwd: Path) -> float:
    """Seconds `python -m pip install REQUIREMENTS` takes in a new virtual environment at `env`."""
    venv.create(env, with_pip=True)
    start = time.perf_counter()
    subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
        check=True,
        capture_output=True,
        cwd=cwd,
    )
    return time.perf_counter() - start


def run(quick: bool = False) -> list[dict]:
    rounds = 1 if quick else 3
    rows = []
    for name, kind, skill in SKILLS[:1] if quick else SKILLS:
        with tempfile.TemporaryDirectory() as tmp:
            here = Path(tmp)
            subprocess.run(
                [sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", f"{name}-mcp"],
                cwd=here,
                check=True,
                capture_output=True,
            )
            dependencies = tomllib.loads((here / f"{name}-mcp" / "pyproject.toml").read_text())["project"]
            pip_install(here / "warm", f"./{name}-mcp", cwd=here)
            ours = [pip_install(here / f"ours{i}", f"./{name}-mcp", cwd=here) for i in range(rounds)]
            base = [pip_install(here / f"base{i}", *dependencies["dependencies"], cwd=here) for i in range(rounds)]
        rows.append(
            {
                "name": f"pip install ./{name}-mcp ({kind}), fresh venv, warm cache (median)",
                "ours": statistics.median(ours),
                "baseline": statistics.median(base),
                "baseline_name": "its dependencies by name",
                "unit": "s",
                "target": None,
            }
        )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row['name']}: {row['ours']:.1f} s; {row['baseline_name']}: {row['baseline']:.1f} s")
