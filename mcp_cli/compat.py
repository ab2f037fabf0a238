"""What differs between the Python versions and platforms mcp-cli supports: TOML is `tomllib` from 3.11, `tomli`
before; the user cache folder is where the platform keeps them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


def toml_loads(text: str) -> dict[str, Any]:
    """Parse TOML (imported on first use: most runs read none). Raises `TOMLDecodeError`, a ValueError."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


def cache_dir() -> Path:
    """mcp-cli's cache folder: `MCP_CLI_CACHE_DIR`, else the platform's user cache folder."""
    import platformdirs  # imported on first use

    return Path(os.environ.get("MCP_CLI_CACHE_DIR") or platformdirs.user_cache_dir("mcp-cli", appauthor=False))
