"""What differs between the Python versions mcp-cli supports: TOML is `tomllib` from 3.11, `tomli` before."""

from __future__ import annotations

import sys
from typing import Any


def toml_loads(text: str) -> dict[str, Any]:
    """Parse TOML (imported on first use: most runs read none). Raises `TOMLDecodeError`, a ValueError."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)
