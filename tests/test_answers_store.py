"""A shared store of answers' next parts (`serve --answers-store`, engine/kept.py), end to end: a real redis-server
(from the OS packages; `.ci/run` installs it) started by the test on a free port, and `--stateless` replicas as real
processes: a cut answer from replica A reads on from replica B, through a real MCP client and through OpenAPI `/run`;
sessions and scopes stay apart; without the store B says what to do; a store that goes away costs only next parts."""

import hashlib
import re
import shutil
import subprocess
import sys

import httpx2
import pytest
from mcp import Client

from mcp_cli.entities import META_KEY
from mcp_cli.testing import call
from mcp_cli.testing import text as text_of

from .conftest import budget, free_port, wait_for_port
from .test_budgets import OWN

pytestmark = pytest.mark.anyio
NEXT = re.compile(r"Next part: `([^`]*)`")
LINE = re.compile(r"^line (\d+)$", re.M)


@pytest.fixture
def tree(tmp_path):
    import json

    path = tmp_path / "lines.json"
    path.write_text(json.dumps(OWN))  # `lines many`: 20,000 numbered lines, far over a budget
    return path


class Redis:
    """A redis-server of this test's own, on a free port, keeping nothing on disk."""

    def __init__(self, folder) -> None:
        self.port, self.folder = free_port(), folder
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.start()

    def start(self) -> None:
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen(
            [
                server,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.proc)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=budget(10))


@pytest.fixture
def redis_server(tmp_path):
    server = Redis(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def replicas(tree):
    """`start(*options)` serves `tree` as a --stateless HTTP replica and gives its base URL; all stop at the end."""
    procs = []

    def start(*options: str, env: dict | None = None) -> str:
        import os

        port = free_port()
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mcp_cli",
                    "serve",
                    str(tree),
                    "--http",
                    f"127.0.0.1:{port}",
                    "--stateless",
                    *options,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={**os.environ, **(env or {})},
            )
        )
        wait_for_port(port, procs[-1])
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=budget(10))


def numbers(text: str) -> list[int]:
    return [int(n) for n in LINE.findall(text)]


async def test_a_next_part_kept_by_one_replica_is_read_from_another(redis_server, replicas):
    a, b = replicas("--answers-store", redis_server.url), replicas(env={"MCP_CLI_ANSWERS_STORE": redis_server.url})
    async with Client(f"{a}/mcp") as one, Client(f"{b}/mcp") as other:
        first = await call(one, "many", tool="lines")
        nxt = NEXT.search(first.text).group(1)
        second = await call(other, command=nxt, tool="lines")  # the other replica: from the shared store
        assert second.ok, second.text
        shown, more = numbers(first.text), numbers(second.text)
        assert shown[0] == 0 and more[0] == shown[-1] + 1  # read on exactly where the first part stopped
        assert more == list(range(more[0], more[0] + len(more)))
        # OpenAPI /run on the first replica reads on from there too, with its own budget
        third = NEXT.search(second.text).group(1).split()[1:]
        run = httpx2.post(f"{a}/run", json={"argv": ["--budget", "800", *third]}, timeout=budget(30))
        assert run.status_code == 200 and numbers(run.json()["output"])[0] == more[-1] + 1
        assert "[cut to the 800-token budget: lines " in run.json()["output"]
        # a session (its `_meta` key) reads only its own answers, on any replica
        mine, theirs = {META_KEY: "conversation-1"}, {META_KEY: "conversation-2"}
        kept = await one.call_tool("lines", {"argv": ["many"]}, meta=mine)
        nxt = NEXT.search(text_of(kept)).group(1)
        elsewhere = await other.call_tool("lines", {"command": nxt}, meta=theirs)
        assert elsewhere.is_error and "no kept answer" in text_of(elsewhere)
        again = await other.call_tool("lines", {"command": nxt}, meta=mine)
        assert not again.is_error and numbers(text_of(again))[0] == numbers(text_of(kept))[-1] + 1


async def test_without_a_shared_store_another_replica_says_what_to_do(redis_server, replicas):
    a, b = replicas("--answers-store", redis_server.url), replicas()
    async with Client(f"{a}/mcp") as one, Client(f"{b}/mcp") as other:
        nxt = NEXT.search((await call(one, "many", tool="lines")).text).group(1)
        elsewhere = await call(other, command=nxt, tool="lines")
        assert not elsewhere.ok and elsewhere.structured["error"] == "not_found"
        assert "kept by another replica of a --stateless server" in elsewhere.text
        assert "replicas share them through `--answers-store redis://HOST:PORT/DB`" in elsewhere.text
        assert "run the call again (`lines many`)" in elsewhere.text


def test_scopes_read_only_their_own_answers(redis_server, replicas, tmp_path):
    tokens = ["first team token", "second team token"]
    scopes = tmp_path / "scopes.toml"
    digests = [hashlib.sha256(t.encode()).hexdigest() for t in tokens]
    scopes.write_text(
        "".join(f'[[scope]]\nname = "same name"\ntoken_sha256 = "{d}"\npaths = ["*"]\n\n' for d in digests)
    )
    a, b = (replicas("--answers-store", redis_server.url, "--scopes", str(scopes)) for _ in range(2))

    def run(url: str, token: str, argv: list[str]) -> dict:
        headers = {"Authorization": f"Bearer {token}"}
        return httpx2.post(f"{url}/run", json={"argv": argv}, headers=headers, timeout=budget(30)).json()

    first = run(a, tokens[0], ["many"])
    nxt = NEXT.search(first["output"]).group(1).split()[1:]
    other = run(b, tokens[1], nxt)  # another scope's answer (the same name, another token): not readable
    assert not other["ok"] and "no kept answer" in other["message"]
    mine = run(b, tokens[0], nxt)
    assert mine["ok"] and numbers(mine["output"])[0] == numbers(first["output"])[-1] + 1


async def test_a_store_that_cannot_be_reached_costs_only_the_next_parts(redis_server, replicas):
    a = replicas("--answers-store", redis_server.url)
    async with Client(f"{a}/mcp") as client:
        nxt = NEXT.search((await call(client, "many", tool="lines")).text).group(1)
        redis_server.stop()
        lost = await call(client, command=nxt, tool="lines")
        assert not lost.ok and lost.structured["error"] == "handler"
        assert f"cannot be read: the answers store {redis_server.url} cannot be reached (ConnectionError" in lost.text
        assert "To read on, run the call again (`lines many`)" in lost.text
        cut = await call(client, "many", tool="lines")  # the answer still comes, its first part, with why
        assert cut.ok and numbers(cut.text)[0] == 0 and "Next part" not in cut.text
        assert (
            "the rest could not be kept for next parts: the answers store "
            f"{redis_server.url} cannot be reached (ConnectionError"
        ) in cut.text
        redis_server.start()  # back: kept again
        back = await call(client, "many", tool="lines")
        assert back.ok and NEXT.search(back.text)
        assert (await call(client, command=NEXT.search(back.text).group(1), tool="lines")).ok


def test_a_store_url_of_another_kind_is_refused_saying_what_to_give(tree):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "serve",
            str(tree),
            "--http",
            str(free_port()),
            "--stateless",
            "--answers-store",
            "http://127.0.0.1:6379",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=budget(60),
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--answers-store takes a Redis or Valkey URL (redis://HOST:PORT/DB" in done.stderr
