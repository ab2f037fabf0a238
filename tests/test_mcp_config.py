"""Config import from every supported file format, with warnings for what is ignored or broken."""

import json

import pytest

from mcp_cli.errors import SourceError
from mcp_cli.sources.mcp_config import CODEX_ENV, looks_like_config, read


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_mcp_servers_json_stdio_http_and_warnings(tmp_path):
    path = write(
        tmp_path,
        "claude_desktop_config.json",
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": "npx",
                        "args": ["-y", "server-filesystem", "/tmp"],
                        "env": {"A": "1"},
                        "cwd": "/tmp",
                        "colour": "red",
                    },
                    "remote": {
                        "type": "http",
                        "url": "https://example.invalid/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"},
                    },
                    "events": {"type": "sse", "url": "https://example.invalid/sse"},
                    "off": {"command": "x", "disabled": True},
                    "broken": {"args": ["no command"]},
                    "badargs": {"command": "x", "args": "not a list"},
                    "tuned": {
                        "command": "y",
                        "timeout": 5,
                        "mcp-cli": {"tools": ["get_*"], "groups": {"a": ["x*"]}, "oops": 1},
                    },
                }
            }
        ),
    )
    assert looks_like_config(path)
    servers, warnings = read(path)
    by_name = {s.name: s for s in servers}
    assert list(by_name) == ["files", "remote", "events", "tuned"]
    assert by_name["files"].config == {
        "command": "npx",
        "args": ["-y", "server-filesystem", "/tmp"],
        "env": {"A": "1"},
        "cwd": "/tmp",
    }
    assert by_name["remote"].config == {
        "url": "https://example.invalid/mcp",
        "transport": "http",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
    }
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
    path = write(
        tmp_path,
        ".claude.json",
        json.dumps(
            {
                "numStartups": 12,
                "theme": "dark",
                "mcpServers": {"top": {"command": "a"}},
                "projects": {
                    "/work/x": {"allowedTools": [], "mcpServers": {"proj": {"command": "b", "args": ["--x"]}}},
                    "/work/y": {"mcpServers": {"top": {"command": "c"}}},
                },
            }
        ),
    )
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
env_vars = ["GIT_AUTHOR_NAME", { name = "GH_TOKEN", source = "local" }]
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
    assert git.config == {
        "command": "uvx",
        "args": ["mcp-server-git"],
        "env": {"GIT_DIR": "/repo"},
        "timeout": 30.0,
        "inherit": [*CODEX_ENV, "GIT_AUTHOR_NAME", "GH_TOKEN"],
    }
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
    assert not looks_like_config(write(tmp_path, "package.json", '{"name": "x"}'))
    assert not looks_like_config(write(tmp_path, "broken.json", "{nope"))  # the tree reader says: invalid JSON


def test_any_toml_file_is_read_as_a_config_so_its_errors_are_about_toml(tmp_path):
    assert looks_like_config(write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n"))
    assert looks_like_config(write(tmp_path, "broken.toml", "x = ["))


@pytest.mark.parametrize(
    "data, words",
    [
        ({"mcpservers": {}}, "unknown top-level key 'mcpservers' (did you mean 'mcpServers'?)"),
        ({"mcp_server": {}}, "unknown top-level key 'mcp_server' (did you mean 'mcp_servers'?)"),
        ({"formatt": "mcp-cli/tree"}, "unknown top-level key 'formatt' (did you mean 'format'?)"),
        ({"name": "x"}, "neither an MCP client config"),
        ({"mcpServers": {}}, None),
        ({"format": "mcp-cli/tree"}, None),
    ],
)
def test_unknown_top_level_keys_get_a_did_you_mean(data, words):
    from mcp_cli.sources.mcp_config import unknown_keys

    problem = unknown_keys(data)
    assert problem is None if words is None else words in problem


def test_an_unknown_server_name_is_an_error_that_lists_the_servers(tmp_path):
    path = write(tmp_path, "mcp.json", json.dumps({"mcpServers": {"git": {"command": "x"}, "time": {"command": "y"}}}))
    with pytest.raises(
        SourceError, match=r"no server named 'gti' \(did you mean 'git'\?\); the file defines 'git', 'time'"
    ):
        read(path, only=["gti"])
    assert [s.name for s in read(path, skip=["nosuch"])[0]] == ["git", "time"]
    assert "--exclude-server 'nosuch': no such server" in read(path, skip=["nosuch"])[1][0]


def test_literal_secrets_become_variable_references_and_plain_values_stay():
    from mcp_cli.sources.credentials import externalise

    upstreams = {
        "vault": {
            "command": "npx",
            "args": [
                "-y",
                "@acme/server@1.2.3",
                "--api-key",
                "k3y-value",
                "--token=ghp_abcdefghijklmnop1234",
                "--header",
                "Authorization: Bearer xyz987abc",
                "4f9d2c1e8b7a6d5c4b3a29180f7e6d5c4b3a2918",
            ],
            "env": {
                "API_KEY": "sk-test-0123456789abcdef",
                "NODE_ENV": "production",
                "LOG_LEVEL": "debug",
                "GOOGLE_APPLICATION_CREDENTIALS": "/x/key.json",
                "SESSION_TIMEOUT": "30",
                "GH_TOKEN": "${GH}",
                "DATABASE_URL": "postgres://me:hunter2@db/x",
                "PROJECT_ID": "550e8400-e29b-41d4-a716-446655440000",
                "SOMETHING": "Ab3dE5gH7jK9mN1pQ3sT5vW7",
                "MAX_TOKENS": "4096",
                "AUTH_MODE": "oauth",
            },
        },
        "other": {"command": "x", "env": {"API_KEY": "a-different-secret"}},
        "web": {
            "url": "https://me:pw@api.example.com/mcp?api_key=abcd1234&x=1",
            "headers": {"Authorization": "Bearer ghp_zzzzzzzzzzzz1234", "X-Team": "core", "X-API-Key": "plain"},
        },
    }
    out, warnings = externalise(upstreams)
    assert upstreams["vault"]["env"]["API_KEY"].startswith("sk-")  # the input is not changed
    assert out["vault"]["env"] == {
        **upstreams["vault"]["env"],
        "API_KEY": "${API_KEY}",
        "DATABASE_URL": "${DATABASE_URL}",
        "SOMETHING": "${SOMETHING}",
    }
    assert out["vault"]["args"] == [
        *["-y", "@acme/server@1.2.3", "--api-key", "${VAULT_API_KEY}", "--token=${VAULT_TOKEN}"],
        *["--header", "Authorization: Bearer ${VAULT_AUTHORIZATION}", "4f9d2c1e8b7a6d5c4b3a29180f7e6d5c4b3a2918"],
    ]
    assert out["other"]["env"] == {"API_KEY": "${OTHER_API_KEY}"}  # another secret under a name already taken
    assert out["web"]["url"] == "https://me:${WEB_PASSWORD}@api.example.com/mcp?api_key=${WEB_API_KEY}&x=1"
    assert out["web"]["headers"] == {
        "Authorization": "Bearer ${WEB_AUTHORIZATION}",
        "X-Team": "core",
        "X-API-Key": "${WEB_X_API_KEY}",
    }
    assert len(warnings) == 11
    assert warnings[0] == (
        "server 'vault': env API_KEY held a literal secret; the package reads it from ${API_KEY} instead "
        "(set API_KEY in the environment the wrapped server runs in)"
    )
    assert not any(secret in w for w in warnings for secret in ("sk-test", "hunter2", "ghp_", "xyz987"))


def test_a_relative_cwd_is_made_absolute_against_the_config_folder(tmp_path):
    cwds = {"rel": "tools", "abs": "/srv", "var": "${CLAUDE_PROJECT_DIR}/tools", "home": "~/w"}
    entries = {name: {"command": "x", "cwd": cwd} for name, cwd in cwds.items()}
    path = write(tmp_path, ".mcp.json", json.dumps({"mcpServers": entries}))
    servers, _ = read(path)
    assert {s.name: s.config["cwd"] for s in servers} == {
        "rel": str(tmp_path / "tools"),
        "abs": "/srv",
        "var": "${CLAUDE_PROJECT_DIR}/tools",
        "home": "~/w",
    }
    assert all("inherit" not in s.config for s in servers)  # a JSON config's servers get the whole environment


def test_codex_env_vars_of_a_remote_source_are_left_out_with_a_warning(tmp_path):
    path = write(
        tmp_path,
        "config.toml",
        """
[mcp_servers.git]
command = "uvx"
env_vars = ["A", { name = "B", source = "remote" }, 3]
""",
    )
    (git,), warnings = read(path)
    assert git.config["inherit"] == [*CODEX_ENV, "A"]
    assert any("`env_vars` 'B' has source 'remote'" in w for w in warnings)
    assert any("`env_vars` entries are names or {name, source} tables; 3 ignored" in w for w in warnings)
