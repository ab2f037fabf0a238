"""Discovery with real upstream processes: a cached tool list is used while fresh and asked for again once older
than its TTL, a remembered failure is asked for again once it expires, `${VAR}` in a server's command, args and
env is expanded from mcp-cli's environment (for listing and for calls), and the cache lives where it is said to.
Whether an upstream was asked is told by whether its process started (a line in a file), never by time."""

import json
import re
import sys
import time

import pytest

from mcp_cli.sources import discovery

from .conftest import age, served, text
from .listed import LISTED, config, entry, mcp_cli, starts

pytestmark = pytest.mark.anyio


def test_a_listing_is_used_while_fresh_and_asked_for_again_once_older_than_its_ttl(tmp_path):
    log, cache = tmp_path / "starts.log", tmp_path / "cache"
    team = config(tmp_path / "team.json", {"gh": entry("list_issues", env={"LISTED_STARTS": str(log)})})
    env = {"MCP_CLI_CACHE_DIR": str(cache)}
    assert "team gh list-issues" in mcp_cli("inspect", str(team), env=env).stdout
    assert starts(log) == 1
    (listing,) = cache.glob("tools-*.json")
    age(listing, discovery.TTL - 600)  # old, but not too old
    assert "team gh list-issues" in mcp_cli("inspect", str(team), env=env).stdout
    assert starts(log) == 1
    age(listing, discovery.TTL + 600)
    assert "team gh list-issues" in mcp_cli("inspect", str(team), env=env).stdout
    assert starts(log) == 2
    assert time.time() - listing.stat().st_mtime < discovery.TTL - 600  # written anew
    mcp_cli("inspect", "--refresh", str(team), env=env)  # fresh, but asked for all the same
    assert starts(log) == 3


def test_a_remembered_failure_is_asked_for_again_once_it_expires(tmp_path):
    log, cache, broken = tmp_path / "starts.log", tmp_path / "cache", tmp_path / "broken"
    broken.write_text("the server cannot start while this file exists")
    server = entry("list_issues", env={"LISTED_STARTS": str(log), "LISTED_FAIL_IF": str(broken)})
    team = config(tmp_path / "team.json", {"gh": server})
    env = {"MCP_CLI_CACHE_DIR": str(cache)}
    first = mcp_cli("inspect", str(team), env=env)
    assert "server 'gh': cannot list its tools" in first.stderr and "missing API key" in first.stderr
    assert starts(log) == 1
    broken.unlink()  # it could start now, but its failure is remembered: not asked
    (failure,) = cache.glob("tools-*.failed")
    age(failure, 0)
    again = mcp_cli("inspect", str(team), env=env)
    assert f"s ago; next try after {discovery.FAILED_TTL:g} s" in again.stderr
    assert re.search(r"^team gh +Unavailable: ", again.stdout, re.M)
    assert starts(log) == 1
    age(failure, discovery.FAILED_TTL + 1)
    later = mcp_cli("inspect", str(team), env=env)
    assert starts(log) == 2
    assert "team gh list-issues" in later.stdout and "cannot list" not in later.stderr
    assert not failure.exists()


async def test_variables_in_command_args_and_env_are_expanded_from_the_environment(tmp_path):
    server = {
        "command": "${PYTHON_FOR_TEST}",
        "args": ["${LISTED_FOR_TEST}", "whoami", "--tag=${TAG_FOR_TEST}", "--mode=${UNSET_FOR_TEST:-plain}"],
        "env": {"LISTED_GREETING": "${GREETING_FOR_TEST}", "LISTED_EMPTY": "${UNSET_FOR_TEST:-}", "LISTED_AS_IS": "x"},
    }
    team = config(tmp_path / "team.json", {"me": server})
    env = {
        "MCP_CLI_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHON_FOR_TEST": sys.executable,
        "LISTED_FOR_TEST": str(LISTED),
        "TAG_FOR_TEST": "v1",
        "GREETING_FOR_TEST": "hello",
    }
    async with served("serve", str(team), env=env) as client:
        result = await client.call_tool("team", {"argv": ["me", "whoami"]})
        assert not result.is_error, text(result)
    got = json.loads(text(result))
    assert got["argv"] == ["whoami", "--tag=v1", "--mode=plain"]
    assert got["env"] == {
        "LISTED_GREETING": "hello",
        "LISTED_EMPTY": "",
        "LISTED_AS_IS": "x",
        "LISTED_FOR_TEST": str(LISTED),
    }  # and the caller's environment, as Claude Code gives it
    (listing,) = (tmp_path / "cache").glob("tools-*.json")  # listed with the variables expanded too
    assert [t["name"] for t in json.loads(listing.read_text())["tools"]] == ["whoami"]


@pytest.mark.skipif(sys.platform != "linux", reason="the user cache folder is XDG_CACHE_HOME's on Linux only")
def test_the_cache_is_in_the_user_cache_folder_unless_mcp_cli_cache_dir_says_otherwise(tmp_path):
    team = config(tmp_path / "team.json", {"gh": entry("list_issues")})
    env = {"MCP_CLI_CACHE_DIR": None, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    mcp_cli("inspect", str(team), env=env)
    assert mcp_cli("cache", env=env).stdout.startswith(f"{tmp_path / 'xdg' / 'mcp-cli'}: 1 cached file(s)")
    assert len(list((tmp_path / "xdg" / "mcp-cli").glob("tools-*.json"))) == 1
    mine = mcp_cli("cache", env={**env, "MCP_CLI_CACHE_DIR": str(tmp_path / "mine")}).stdout
    assert mine.startswith(f"{tmp_path / 'mine'}: 0 cached file(s)")


def test_what_a_server_says_of_itself_is_kept_and_summarises_its_domain(tmp_path):
    said = {"LISTED_TITLE": "Parcel Tracker", "LISTED_DESCRIPTION": "Tracks parcels across carriers. Needs a key."}
    team = config(tmp_path / "team.json", {"ship": entry("get_thing", env=said), "mcp": entry("list_parcels")})
    env = {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    root = mcp_cli("run", str(team), "--", "--help", env=env).stdout
    assert re.search(r"^  ship +Tracks parcels across carriers\.$", root, re.M)  # its description, not `thing.`
    cached = [json.loads(p.read_text())["server"] for p in (tmp_path / "cache").glob("tools-*.json")]
    assert {
        "name": "listed",
        "version": "1",
        "title": "Parcel Tracker",
        "description": said["LISTED_DESCRIPTION"],
        "instructions": "",
    } in cached
