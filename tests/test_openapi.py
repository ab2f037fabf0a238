"""The OpenAPI surface: real `mcp-cli serve` processes (`--openapi` alone, or beside /mcp with `--http`) driven with a
plain HTTP client; the document checked as OpenAPI 3.1 by openapi-spec-validator, each answer against its schema."""

import json
import subprocess
import sys
from contextlib import contextmanager

import httpx2
import jsonschema
import pytest
from mcp import Client
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from mcp_cli.testing import envelope as served_envelope

from .conftest import DEMO, FAULTS, ROOT, budget, free_port, text, wait_for_port
from .test_http_security import LAUNCHER, TOKEN, environment, server

SERVE = [sys.executable, "-m", "mcp_cli", "serve"]
ARGTOOL = ROOT / "tests" / "fixtures" / "skills" / "argtool"
AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"


@contextmanager
def serving(command: list[str], flag: str = "--openapi", env: dict[str, str] | None = None):
    """`command FLAG 127.0.0.1:PORT` running; yields its base URL and the process."""
    with server(command, "127.0.0.1", "127.0.0.1", env=env or environment(), flag=flag) as (url, proc):
        yield url.removesuffix("/mcp"), proc


@pytest.fixture(scope="module")
def demo():
    with serving([*SERVE, str(DEMO)]) as (base, proc):
        document = httpx2.get(f"{base}/openapi.json", timeout=budget(30)).json()
        yield base, proc, document


def run(base: str, body, **headers: str) -> httpx2.Response:
    """POST /run with `body` (JSON unless it is bytes)."""
    content = body if isinstance(body, bytes) else None
    json = None if isinstance(body, bytes) else body
    return httpx2.post(f"{base}/run", json=json, content=content, headers=headers, timeout=budget(60))


def envelope(response: httpx2.Response, document: dict, status: int = 200) -> dict:
    """The result envelope of a response, checked against the document's schema for it."""
    assert response.status_code == status, response.text
    body = response.json()
    jsonschema.validate(body, document["components"]["schemas"]["Result"])
    return body


def test_the_document_is_openapi_3_1_with_one_run_operation(demo):
    base, _, document = demo
    validate(document, cls=OpenAPIV31SpecValidator)
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": base}]
    assert list(document["paths"]) == ["/run"] and list(document["paths"]["/run"]) == ["post"]
    operation = document["paths"]["/run"]["post"]
    assert operation["operationId"] == "run"
    assert operation["description"].startswith("A small toolkit for text, numbers and files")
    assert "Domains: text, math, files." in operation["description"] and "--help" in operation["description"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["properties"]) == {"argv", "command"}
    assert "security" not in document  # no token set


def test_help_at_every_level_and_a_real_run(demo):
    base, _, document = demo
    root = envelope(run(base, {"argv": ["--help"]}), document)
    assert root["ok"] and root["output"].startswith("demo - ") and "Domains:" in root["output"]
    group = envelope(run(base, {"command": "math --help"}), document)
    assert "add   Add two integers." in group["output"]
    command = envelope(run(base, {"argv": ["math", "add", "--help"]}), document)
    assert "demo math add A B" in command["output"]
    added = envelope(run(base, {"command": "math add 20 22"}), document)
    assert added == {"ok": True, "command": "demo math add", "output": "42", "data": 42}


def test_a_failed_command_is_a_200_with_the_error_envelope(demo):
    base, _, document = demo
    missing = envelope(run(base, {"argv": ["math", "ad"]}), document)
    assert not missing["ok"] and missing["error"] == "not_found"
    assert "Did you mean `add`?" in missing["message"] and "Commands:" in missing["message"]
    usage = envelope(run(base, {"argv": ["math", "add", "two", "3"]}), document)
    assert usage["error"] == "usage" and "demo math add A B" in usage["message"]


@pytest.mark.parametrize(
    "body, says",
    [
        (b"math add 1 2", "the request body is not JSON"),
        (b'{"argv": ["\xff"]}', "the request body is not JSON"),
        (b"[" * 100_000, "the request body is not JSON"),
        ({"argv": ["--help"], "command": "--help"}, "not both"),
        ({}, "give `argv` (a list of strings) or `command`"),
        ({"argv": "math add 1 2"}, "`argv` must be a list of strings"),
        ({"command": ["math"]}, "`command` must be a string"),
        ({"args": ["--help"]}, "unknown field(s) 'args'"),
        (["--help"], "the arguments must be an object"),
        ({"argv": ["math", "add", "1\u0000", "2"]}, "NUL character"),
    ],
    ids=["not-json", "not-utf8", "too-deep", "both", "neither", "argv-str", "command-list", "unknown", "array", "nul"],
)
def test_a_malformed_body_is_a_400_bad_request_and_the_server_keeps_serving(demo, body, says):
    base, proc, document = demo
    bad = envelope(run(base, body, **{"Content-Type": "application/json"}), document, status=400)
    assert not bad["ok"] and bad["error"] == "bad_request"
    assert says in bad["message"] and "\n" not in bad["message"].strip()
    assert envelope(run(base, {"command": "math add 1 2"}), document)["data"] == 3
    assert proc.poll() is None


def test_no_failure_is_a_plain_500_and_the_connection_stays():
    """What fails inside a request is answered in the envelope, on the connection it came on: data JSON cannot carry
    (a handler's NaN) was a plain-text 500 that closed the connection; numbers int() refuses were one too."""
    with serving([*SERVE, str(FAULTS)]) as (base, proc):
        document = httpx2.get(f"{base}/openapi.json", timeout=budget(30)).json()
        with httpx2.Client(timeout=budget(60)) as client:
            answers = []
            for argv in (
                ["py", "unsendable"],
                ["--budget", "²", "py", "chatty", "x"],
                ["py", "typed", "--count", "٣"],
                ["py", "typed", "--count", "7" * 5000],
                ["--more", "ab:" + "1" * 5000, "py"],
                ["sh", "echo", "still", "here"],
            ):
                response = client.post(f"{base}/run", json={"argv": argv})
                assert response.headers.get("connection") != "close", argv
                answers.append(envelope(response, document))
        assert answers[0] == {"ok": True, "command": "faults py unsendable", "output": "not a number\n"}  # no data
        assert [a.get("error") for a in answers[1:]] == ["usage"] * 4 + [None]
        assert "'²'; give a whole number in the digits 0-9, e.g. 8000" in answers[1]["message"]
        assert "'٣'; write it in the digits 0-9: 3" in answers[2]["message"]
        assert "it has 5,000 digits, more than the 4,300 a number may have" in answers[3]["message"]
        assert answers[5]["output"] == '["still", "here"]\n' and proc.poll() is None


def test_an_empty_unused_field_counts_as_not_given(demo):
    base, _, document = demo
    for body in ({"argv": [], "command": "math add 1 2"}, {"argv": ["math", "add", "1", "2"], "command": ""}):
        assert envelope(run(base, body), document)["data"] == 3, body


def test_a_body_over_the_limit_is_refused(demo):
    base, proc, document = demo
    response = run(base, b'{"argv": ["' + b"x" * 5_000_000 + b'"]}')
    assert response.status_code == 413
    assert envelope(run(base, {"argv": ["--help"]}), document)["ok"] and proc.poll() is None


def test_host_origin_and_cors(demo):
    base, _, document = demo
    assert run(base, {"argv": ["--help"]}, Host="evil.example.test").status_code == 421
    assert run(base, {"argv": ["--help"]}, Origin="https://evil.example.test").status_code == 403
    called = run(base, {"argv": ["--help"]}, Origin="http://localhost:3000")
    assert called.headers["access-control-allow-origin"] == "http://localhost:3000"
    preflight = httpx2.options(
        f"{base}/run",
        headers={
            "Origin": "http://localhost:3000",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "POST" in preflight.headers["access-control-allow-methods"]


def test_a_token_is_required_when_set():
    with serving([*SERVE, str(DEMO)], env=environment(MCP_CLI_TOKEN=TOKEN)) as (base, proc):
        assert httpx2.get(f"{base}/openapi.json").status_code == 401
        refused = run(base, {"argv": ["--help"]})
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_token"
        assert run(base, {"argv": ["--help"]}, Authorization="Bearer wrong").status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        document = httpx2.get(f"{base}/openapi.json", headers=bearer).json()
        validate(document, cls=OpenAPIV31SpecValidator)
        assert document["security"] == [{"bearer": []}]
        assert document["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
        assert envelope(run(base, {"command": "math add 20 22"}, **bearer), document)["data"] == 42
        preflight = httpx2.options(  # a browser's preflight carries no token
            f"{base}/run", headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
        )
        assert preflight.status_code == 200
        assert proc.poll() is None


@pytest.mark.anyio
async def test_http_serves_mcp_and_openapi_side_by_side():
    with serving([*SERVE, str(DEMO)], flag="--http") as (base, _):
        async with Client(f"{base}/mcp") as client:
            (tool,) = (await client.list_tools()).tools
            added = await client.call_tool("demo", {"command": "math add 20 22"})
            async with httpx2.AsyncClient(timeout=budget(60)) as http:
                document = (await http.get(f"{base}/openapi.json")).json()
                answer = (await http.post(f"{base}/run", json={"command": "math add 20 22"})).json()
        validate(document, cls=OpenAPIV31SpecValidator)
        operation = document["paths"]["/run"]["post"]
        assert operation["description"] == tool.description
        assert operation["requestBody"]["content"]["application/json"]["schema"] == tool.input_schema
        assert {k: v for k, v in answer.items() if k != "output"} == served_envelope(added)  # MCP: the text beside
        assert text(added).strip() == answer["output"]


def test_a_skill_tree_over_openapi():
    with serving([*SERVE, str(ARGTOOL)]) as (base, _):
        document = httpx2.get(f"{base}/openapi.json").json()
        validate(document, cls=OpenAPIV31SpecValidator)
        assert document["info"]["title"] == "argtool"
        counted = envelope(run(base, {"argv": ["count", "a", "b", "c"]}), document)
        assert counted["ok"] and counted["output"].strip() == "3" and counted["exit_code"] == 0
        guide = envelope(run(base, {"command": "docs guide exporting"}), document)
        assert guide["output"].startswith("## Exporting")


def test_a_wrapped_mcp_server_over_openapi(tmp_path):
    """Upstream servers start when called, from the runtime the OpenAPI app holds open."""
    config = tmp_path / "team.json"
    time = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    config.write_text(json.dumps({"mcpServers": {"time": time}}))
    env = environment(MCP_CLI_CACHE_DIR=str(tmp_path / "cache"))
    with serving([*SERVE, str(config)], env=env) as (base, _):
        document = httpx2.get(f"{base}/openapi.json").json()
        assert "Run `time --help`" in document["paths"]["/run"]["post"]["description"]
        answer = envelope(run(base, {"command": "time get-current-time --timezone Asia/Tokyo"}), document)
        assert answer["ok"] and answer["command"] == "team time get-current-time"
        assert json.loads(answer["output"])["datetime"].endswith("+09:00")
        secret = tmp_path / "secret.json"  # a file of the server's machine, which an HTTP client must not read
        secret.write_text(json.dumps({"timezone": "sk-live-SECRET"}))
        refused = envelope(run(base, {"argv": ["time", "get-current-time", "--json", f"@{secret}"]}), document)
        assert refused["error"] == "usage" and "files are read only for callers on this machine" in refused["message"]
        assert "SECRET" not in json.dumps(refused)


def test_a_built_packages_launcher_takes_openapi():
    with serving([*LAUNCHER, str(DEMO)]) as (base, _):
        validate(httpx2.get(f"{base}/openapi.json").json(), cls=OpenAPIV31SpecValidator)
        assert httpx2.post(f"{base}/run", json={"argv": ["math", "add", "2", "3"]}).json()["data"] == 5
        assert httpx2.post(f"{base}/mcp", json={}).status_code == 404  # the OpenAPI surface alone


@pytest.mark.parametrize("command", [SERVE, LAUNCHER], ids=["serve", "launcher"])
@pytest.mark.parametrize(
    "args, says",
    [
        (["--http", "127.0.0.1:8000", "--openapi", "127.0.0.1:8001"], "not both"),
        (["--openapi", "127.0.0.1:8000", "--stateless"], "--stateless is for HTTP: give --http"),
        (["--openapi", "127.0.0.1:8000", "--surface", "meta"], "--surface is for MCP clients"),
        (["--openapi", "eight"], "--openapi expects HOST:PORT or PORT"),
        (["--openapi", "192.0.2.1:8000"], "without a token"),
    ],
    ids=["both", "stateless", "meta", "bad-address", "no-token"],
)
def test_options_that_do_not_go_with_openapi_are_refused(command, args, says):
    done = subprocess.run([*command, str(DEMO), *args], cwd=ROOT, env=environment(), capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert says in done.stderr and "Traceback" not in done.stderr


LIBRARY_APP = """
import sys, uvicorn
from mcp_cli import Runtime, load
from mcp_cli.surfaces import mcp_server, openapi
runtime = Runtime(load(sys.argv[1]))
app = openapi.app(runtime) if sys.argv[2] == "openapi" else mcp_server.build(runtime).streamable_http_app()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[3]), log_level="warning")
"""


@contextmanager
def library_app(config, kind: str):
    """The OpenAPI or MCP app built from the public API as a library user would (no `serve`), served by uvicorn."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", LIBRARY_APP, str(config), kind, str(port)],
        cwd=ROOT,
        env=environment(MCP_CLI_CACHE_DIR=str(config.parent / "cache")),
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=budget(5))


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openapi", "mcp"])
async def test_apps_built_as_a_library_read_no_file_for_their_http_clients(tmp_path, kind):
    """Whether `@FILE` is read is the surface's to say, per call: an HTTP app never reads the server's files, however
    it was built; the same tree over stdio still does (test_wrap_schema)."""
    config = tmp_path / "awk.json"
    config.write_text(json.dumps({"mcpServers": {"awkward": {"command": sys.executable, "args": [str(AWKWARD)]}}}))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"query": "sk-live-SECRET"}))
    argv = ["awkward", "echo-args", "--json", f"@{secret}"]
    with library_app(config, kind) as base:
        if kind == "openapi":
            answer = httpx2.post(f"{base}/run", json={"argv": argv}, timeout=budget(20)).json()
            ok, said = answer["ok"], json.dumps(answer)
        else:
            async with Client(f"{base}/mcp") as client:
                result = await client.call_tool("awk", {"argv": argv})
                ok, said = not result.is_error, text(result) + json.dumps(served_envelope(result))
                plain = await client.call_tool("awk", {"argv": ["awkward", "echo-args", "--query", "q"]})
                assert not plain.is_error and json.loads(text(plain)) == {"query": "q"}  # the app does serve
    assert not ok and "files are read only for callers on this machine" in said
    assert "SECRET" not in said
