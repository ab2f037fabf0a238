"""One tree over real MCP servers from the registries (npm server-everything over stdio and streamable HTTP,
server-filesystem, server-memory; PyPI mcp-server-time and mcp-server-git), called through the single tool,
with the upstream effect checked where it lands."""

import json
import os
import subprocess
import sys

import pytest

from mcp_cli.testing import ok

from .conftest import NODE_BIN, budget, free_port, inspector, served, wait_for_port

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Folders and a config for five servers; server-everything also runs over streamable HTTP."""
    root = tmp_path_factory.mktemp("real")
    files, repo = root / "files", root / "repo"
    files.mkdir()
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "untracked-note.txt").write_text("hello git")
    port = free_port()
    http = subprocess.Popen(
        [str(NODE_BIN / "mcp-server-everything"), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, http)
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                    "everything-http": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"},
                    "files": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(files)]},
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(root / "mem.jsonl")},
                    },
                    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
                    "git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]},
                }
            }
        )
    )
    yield {"config": config, "files": files, "repo": repo, "memory": root / "mem.jsonl", "cache": root / "cache"}
    http.terminate()
    http.wait(timeout=budget(10))


@pytest.fixture(scope="module")
async def team(world):
    async with served("serve", str(world["config"]), env={"MCP_CLI_CACHE_DIR": str(world["cache"])}) as client:
        yield client


async def test_one_tool_with_a_group_per_server(team):
    assert [t.name for t in (await team.list_tools()).tools] == ["team"]
    root = await ok(team, command="--help")
    for group in ("everything", "everything-http", "files", "memory", "time", "git"):
        assert f"\n  {group} " in root


async def test_everything_over_stdio_and_http(team):
    assert "The sum of 2 and 40 is 42." in await ok(team, command="everything get-sum --a 2 --b 40")
    assert "Echo: over http" in await ok(team, command="everything-http echo --message 'over http'")


async def test_filesystem_writes_a_real_file(team, world):
    target = world["files"] / "from-agent.txt"
    await ok(team, command=f"files write-file --path {target} --content 'written through mcp-cli'")
    assert target.read_text() == "written through mcp-cli"
    assert "written through mcp-cli" in await ok(team, command=f"files read-text-file --path {target}")


async def test_memory_stores_an_entity(team, world):
    entity = '{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}'
    await ok(team, command=f"memory create-entities --entities '{entity}'")
    stored = [json.loads(line) for line in world["memory"].read_text().splitlines()]
    assert any(e.get("name") == "Ada" and e.get("entityType") == "person" for e in stored)
    assert "Ada" in await ok(team, command="memory search-nodes --query Ada")


async def test_time_answers_for_a_timezone(team):
    answer = json.loads(await ok(team, command="time get-current-time --timezone Asia/Tokyo"))
    assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")


async def test_git_reads_the_status(team, world):
    assert "untracked-note.txt" in await ok(team, "git", "status", "--repo-path", world["repo"])
    assert "untracked-note.txt" in await ok(team, "git", "git_status", "--repo-path", world["repo"])  # original name


async def test_search_finds_tools_across_servers(team):
    hits = await ok(team, command="search write a file")
    assert hits.splitlines()[0].split()[0:2] == ["files", "write-file"]


def test_inspector_strict_accepts_the_wrapped_server(world, tmp_path):
    server = [sys.executable, "-m", "mcp_cli", "serve", str(world["config"])]
    listed = inspector(
        server,
        "--method",
        "tools/list",
        home=tmp_path,
        strict=True,
        path=os.environ["PATH"],
        MCP_CLI_CACHE_DIR=str(world["cache"]),
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["tools"][0]["name"] == "team"


async def test_wrap_builds_a_servable_artifact(world, tmp_path):
    out = tmp_path / "team-mcp"
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(world["cache"])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "wrap",
            str(world["config"]),
            "-o",
            str(out),
            "--server",
            "time",
            "--server",
            "git",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    frozen = json.loads((out / "team_mcp" / "data" / "mcp-cli-tree.json").read_text())
    assert sorted(frozen["upstreams"]) == ["git", "time"]
    async with served(str(out / "team_mcp" / "__main__.py"), command=sys.executable) as client:
        assert "--source-timezone TEXT" in await ok(client, command="time convert-time --help")
        answer = await ok(client, command="time get-current-time --timezone UTC")
        assert json.loads(answer)["timezone"] == "UTC"
