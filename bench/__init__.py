"""mcp-cli benchmarks. `python -m bench` runs them and writes bench/RESULTS.md."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def own_cache() -> Iterator[Path]:
    """A tool-list cache of its own (MCP_CLI_CACHE_DIR, inherited by every process started) while inside, the one
    before restored after: no failure remembered by one part counts in another."""
    before = os.environ.get("MCP_CLI_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MCP_CLI_CACHE_DIR"] = cache
        try:
            yield Path(cache)
        finally:
            os.environ.pop("MCP_CLI_CACHE_DIR")
            if before is not None:
                os.environ["MCP_CLI_CACHE_DIR"] = before


def mark(ok: bool) -> str:
    """A target's verdict in the report."""
    return "pass" if ok else "MISSED"


def wait_for_port(port: int, proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Until a server on 127.0.0.1:`port` takes connections, `proc` ends, or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
