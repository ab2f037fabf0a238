"""Config import from every supported file format, with warnings for what is ignored or broken."""

import json

import pytest

from mcp_cli.errors import SourceError
from mcp_cli.sources.mcp_config import looks_like_config, read


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_mcp_servers_json_stdio_http_and_warnings(tmp_path):
    path = write(tmp_path, "claude_desktop_config.json", json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"}, "cwd": "/tmp",
                  "colour": "red"},
        "remote": {"type": "http", "url": "https://example.invalid/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "events": {"type": "sse", "url": "https://example.invalid/sse"},
        "off": {"command": "x", "disabled": True},
        "broken": {"args": ["no command"]},
        "badargs": {"command": "x", "args": "not a list"},
        "tuned": {"command": "y", "timeout": 5, "mcp-cli": {"tools": ["get_*"], "groups": {"a": ["x*"]}, "oops": 1}},
    }}))  # fmt: skip
    assert looks_like_config(path)
    servers, warnings = read(path)
    by_name = {s.name: s for s in servers}
    assert list(by_name) == ["files", "remote", "events", "tuned"]
    assert by_name["files"].config == {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
                                       "env": {"A": "1"}, "cwd": "/tmp"}  # fmt: skip
    assert by_name["remote"].config == {"url": "https://example.invalid/mcp", "transport": "http",
                                        "headers": {"Authorization": "Bearer ${TOKEN}"}}  # fmt: skip
    assert by_name["events"].config["transport"] == "sse"
    assert by_name["tuned"].config == {"command": "y", "args": [], "timeout": 5.0}
    assert by_name["tuned"].options["tools"] == ["get_*"]
    text = "\n".join(warnings)
    assert "server 'files': unknown key 'colour' ignored" in text
    assert "server 'broken': needs a `command` (stdio) or a `url` (HTTP); skipped" in text
    assert "server 'badargs': `args` must be a list of strings; skipped" in text
    assert "server 'tuned': unknown mcp-cli option 'oops' ignored" in text
    assert all(str(path) in w for w in warnings)


def test_tool_patterns():
    from mcp_cli.sources.mcp_config import Server

    server = Server("gh", {}, {"exclude_tools": ["delete_*"]})
    assert server.wants("get_issue", ["get_*", "gh/list_*"], [])
    assert server.wants("list_prs", ["get_*", "gh/list_*"], [])
    assert not server.wants("create_issue", ["get_*"], [])
    assert not server.wants("delete_repo", [], [])
    assert not server.wants("get_x", [], ["gh/get_*"])


def test_claude_code_user_file_takes_only_server_entries(tmp_path):
    path = write(tmp_path, ".claude.json", json.dumps({
        "numStartups": 12, "theme": "dark",
        "mcpServers": {"top": {"command": "a"}},
        "projects": {"/work/x": {"allowedTools": [], "mcpServers": {"proj": {"command": "b", "args": ["--x"]}}},
                     "/work/y": {"mcpServers": {"top": {"command": "c"}}}},
    }))  # fmt: skip
    servers, warnings = read(path)
    assert [(s.name, s.config["command"]) for s in servers] == [("top", "a"), ("proj", "b")]
    assert any("'top' is defined twice" in w for w in warnings)


def test_codex_config_toml(tmp_path):
    path = write(
        tmp_path,
        "config.toml",
        """
model = "o4"

[mcp_servers.git]
command = "uvx"
args = ["mcp-server-git"]
env = { GIT_DIR = "/repo" }
tool_timeout_sec = 30
enabled_tools = ["git_status", "git_log"]

[mcp_servers.off]
command = "x"
enabled = false

[mcp_servers.api]
url = "https://example.invalid/mcp"
bearer_token_env_var = "API_TOKEN"
http_headers = { "X-Team" = "core" }
""",
    )
    assert looks_like_config(path)
    servers, warnings = read(path)
    assert [s.name for s in servers] == ["git", "api"]
    git, api = servers
    assert git.config == {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_DIR": "/repo"}, "timeout": 30.0}
    assert git.options["tools"] == ["git_status", "git_log"]
    assert api.config["headers"] == {"X-Team": "core", "Authorization": "Bearer ${API_TOKEN}"}
    assert warnings == []


def test_vscode_servers_key_and_filters(tmp_path):
    path = write(tmp_path, "mcp.json", json.dumps({"servers": {"a": {"command": "x"}, "b": {"command": "y"}}}))
    assert [s.name for s in read(path, only=["b"])[0]] == ["b"]
    assert [s.name for s in read(path, skip=["b"])[0]] == ["a"]


@pytest.mark.parametrize(
    "name, text, words",
    [
        ("bad.json", "{nope", "not valid JSON"),
        ("bad.toml", "x = [", "not valid TOML"),
        ("empty.toml", "model = 'x'", r"no \[mcp_servers.NAME\] tables"),
    ],
)
def test_unreadable_configs_name_the_file(tmp_path, name, text, words):
    path = write(tmp_path, name, text)
    with pytest.raises(SourceError, match=words) as info:
        read(path)
    assert str(path) in str(info.value)


def test_non_configs_are_not_taken_for_configs(tmp_path):
    assert not looks_like_config(write(tmp_path, "tree.json", '{"format": "mcp-cli/tree"}'))
    assert not looks_like_config(write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n"))
