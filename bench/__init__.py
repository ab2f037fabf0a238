"""mcp-cli benchmarks. `python -m bench` runs them and writes bench/RESULTS.md."""

from __future__ import annotations

import os
import tempfile
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
