"""mcp-cli benchmarks. `python -m bench` runs them and writes bench/RESULTS.md."""


def mark(ok: bool) -> str:
    """A target's verdict in the report."""
    return "pass" if ok else "MISSED"
