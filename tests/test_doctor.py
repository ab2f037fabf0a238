"""`mcp-cli doctor SOURCE`: for a config, each server started now and why one failed (a command not on PATH, an
unset variable, a login needed, a crash with its stderr's last lines), the tool names and schemas a model API
refuses served directly (and that the one tool passes, and calls each of them as the doctor says), names alike in
kebab-case with each one's command, server keys alike with each one's domain; for a skill folder, its build
warnings. Exit status 1 when a server failed."""

import json
import os
import subprocess
import sys

import pytest

from mcp_cli.testing import ok

from . import forked
from .conftest import NODE_BIN, ROOT, budget, free_port, served, wait_for_port

NAMES = ROOT / "tests" / "fixtures" / "upstreams" / "names.py"
SCHEMAS = ROOT / "tests" / "fixtures" / "upstreams" / "schemas.py"
CRASH = "import sys; sys.stderr.write('starting\\nboom: no database at db.sqlite\\n'); sys.exit(3)"


def doctor(*args, tmp_path, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if k != "DOCTOR_TEST_KEY"}
    full.update({"MCP_CLI_CACHE_DIR": str(tmp_path / "cache"), **(env or {})})
    return forked.mcp_cli("doctor", *map(str, args), env=full, cwd=cwd, timeout=budget(180))


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "team.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(tmp_path / "mem.jsonl")},
                    },
                    "names": {"command": sys.executable, "args": [str(NAMES)]},
                    "missing": {"command": "no-such-mcp-server-for-doctor"},
                    "vault": {"command": sys.executable, "args": [str(NAMES)], "env": {"KEY": "${DOCTOR_TEST_KEY}"}},
                    "crash": {"command": sys.executable, "args": ["-c", CRASH]},
                    "half": {"args": ["--port", "1"]},
                }
            }
        )
    )
    return path


def test_doctor_tells_why_servers_fail_and_which_names_and_schemas_a_model_api_refuses(config, tmp_path):
    proc = doctor(config, tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2:4] == ["Config:", "  server 'half': needs a `command` (stdio) or a `url` (HTTP); skipped"]
    servers = lines[lines.index("Servers:") + 1 : lines.index("Servers:") + 8]
    assert servers[0].startswith("  memory: ok: ") and servers[0].endswith(" tools")
    assert servers[1] == "  names: ok: 8 tools"
    assert servers[2] == (
        "  missing: failed: command `no-such-mcp-server-for-doctor` not found on PATH: install it, "
        "or give its full path in the configuration"
    )
    assert servers[3].startswith("  vault: failed: the environment variable DOCTOR_TEST_KEY is not set")
    assert servers[4].startswith("  crash: failed: ")
    assert servers[5:7] == ["      starting", "      boom: no database at db.sqlite"]  # its stderr's last lines
    api = lines[lines.index("Tool names and schemas a model API refuses when a host serves the tools directly:") + 1 :]
    assert api[:6] == [
        "  names/créer_problème: name: characters outside a-z A-Z 0-9 _ - (è é)",
        "  names/获取用户: name: characters outside a-z A-Z 0-9 _ - (取 户 用 获)",
        "  names/files.read: name: characters outside a-z A-Z 0-9 _ - (.)",
        "  names/fetch_the_complete_quarterly_revenue_report_for_every_region_and_product_line: name: 77 characters, "
        "over 64",
        "  names/lookup: top-level oneOf",
        "  mcp-cli serves them safely: a host sees one tool, `team`, whose input schema is mcp-cli's own (argv or "
        "command); these tools are commands in it",
    ]
    assert not any(line.startswith("  memory/") for line in lines)  # its names and schemas are fine
    alike = lines[lines.index("Tool names that are one in kebab-case (each keeps a command of its own):") + 1]
    assert (
        alike == "  names: get-user: getUser -> `names getUser`, get-user -> `names get-user`, get_user -> "
        "`names get_user`"
    )
    assert lines[-1].startswith("5 servers: 2 ok, 3 failed; ")
    assert lines[-1].endswith(
        "; 5 a model API would refuse served directly (served safely here); 1 set of names "
        "alike in kebab-case (each has its command)"
    )


@pytest.mark.anyio
async def test_doctor_names_refused_schemas_and_server_keys_alike_and_each_is_called_as_it_says(tmp_path):
    path = tmp_path / "shop.json"
    keys = ("shop_schemas", "shop-schemas", "search")
    path.write_text(
        json.dumps({"mcpServers": {k: {"command": sys.executable, "args": [str(SCHEMAS), k]} for k in keys}})
    )
    proc = doctor(path, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    api = lines[lines.index("Tool names and schemas a model API refuses when a host serves the tools directly:") + 1 :]
    assert api[:3] == [
        "  shop_schemas/find: top-level anyOf",
        "  shop_schemas/merge: top-level allOf",
        "  shop_schemas/ship: top-level if, then",
    ]
    assert {f"  {k}/ship: top-level if, then" for k in keys} <= set(api[:9])
    domains = lines[
        lines.index("Server keys that are one in kebab-case (each server keeps a domain of its own):") + 1 :
    ]
    assert domains[:2] == [
        "  shop-schemas: shop-schemas -> `shop-schemas`, shop_schemas -> `shop_schemas`",
        "  search: search -> `search-2` (`search` is the root's own command)",
    ]
    assert lines[-1] == (
        "3 servers: 3 ok, 0 failed; 9 tools; 9 a model API would refuse served directly (served "
        "safely here); 2 sets of names alike in kebab-case (each has its command)"
    )
    # served as the doctor says: each tool of each server through the domain it named
    named = {k: d for line in domains[:2] for k, d in (p.split(" -> ") for p in line.split(": ", 1)[1].split(", "))}
    async with served("serve", str(path), env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}) as client:
        for key in keys:
            domain = named[key].split("`")[1]
            assert await ok(client, domain, "find", "--email", "a@b") == f'{key} find got {{"email": "a@b"}}'
            assert await ok(client, domain, "merge", "--base", "main") == f'{key} merge got {{"base": "main"}}'
            said = await ok(client, domain, "ship", "--method", "post", "--address", "here")
            assert said == f'{key} ship got {{"address": "here", "method": "post"}}'


def test_doctor_of_working_servers_exits_0_and_says_json_when_asked(config, tmp_path):
    proc = doctor(
        config, "--server", "memory", "--server", "vault", "--json", tmp_path=tmp_path, env={"DOCTOR_TEST_KEY": "set"}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["failed"] == 0 and list(report["servers"]) == ["memory", "vault"]
    assert report["servers"]["vault"] == "ok: 8 tools"
    assert {f["subject"] for f in report["findings"] if f["section"] == "api"} >= {"vault/files.read", "vault/lookup"}


def test_doctor_names_the_login_a_server_needs(tmp_path):
    port = free_port()
    oauth = ROOT / "tests" / "fixtures" / "upstreams" / "oauth_server.py"
    proc = subprocess.Popen(
        [sys.executable, str(oauth), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, proc)
        (tmp_path / "team.json").write_text(
            json.dumps({"mcpServers": {"prot": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}})
        )
        done = doctor("team.json", tmp_path=tmp_path, cwd=tmp_path, env={"MCP_CLI_OAUTH_DIR": str(tmp_path / "t")})
    finally:
        proc.terminate()
        proc.wait(timeout=budget(30))
    assert done.returncode == 1, done.stderr
    assert "  prot: failed: needs an OAuth login: run `mcp-cli login team.json prot`" in done.stdout.splitlines()


def test_doctor_of_a_skill_folder_lists_its_build_warnings(tmp_path):
    proc = doctor(ROOT / "tests" / "fixtures" / "malformed" / "duplicate-commands", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1:] == [
        "",
        "Skill build warnings:",
        "  scripts/make_report.py: another script or folder is already named 'make-report'; this one is "
        "'make-report-py'",
        "",
        "skill 'duplicate-commands': 2 commands, 1 warning",
    ]


def test_doctor_of_something_else_is_one_line_and_status_2(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    proc = doctor(tmp_path / "notes.txt", tmp_path=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.strip().splitlines() == [
        f"mcp-cli: doctor: {tmp_path / 'notes.txt'}: not an MCP client config or a skill folder"
    ]
