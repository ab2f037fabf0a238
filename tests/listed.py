"""MCP client configs of the fast test upstream `fixtures/upstreams/listed.py`, and `mcp-cli` run on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import forked
from .conftest import ROOT, budget

LISTED = ROOT / "tests" / "fixtures" / "upstreams" / "listed.py"


def entry(*tools: str, **more: Any) -> dict[str, Any]:
    """A server entry for `listed.py` serving `tools` (`name` or `name@toolset`); `more` adds keys (env, ...)."""
    return {"command": sys.executable, "args": [str(LISTED), *tools], **more}


def config(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """An `mcpServers` file at `path`."""
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def mcp_cli(*args: str, env: dict[str, str | None]) -> subprocess.CompletedProcess:
    """`mcp-cli ARGS` with `env` over the environment (None unsets a variable), forked from a process that
    imported mcp-cli once (tests/forked.py); it must succeed."""
    full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    proc = forked.mcp_cli(*args, env=full, cwd=ROOT, timeout=budget(120))
    assert proc.returncode == 0, proc.stderr
    return proc


def starts(path: Path) -> int:
    """How often a server with `LISTED_STARTS=path` was started."""
    return path.read_text().count("start") if path.exists() else 0
