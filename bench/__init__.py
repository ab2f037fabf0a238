"""mcp-cli benchmarks. `python -m bench` runs them and writes bench/RESULTS.md."""
