"""The examples of README.md and of the docs site (docs/*.md), run (docs/development.md).

Every line of every `bash` block runs as written, with bash, in a temporary folder that holds copies of `skills/`
and `examples/` and the configuration files the documents show (`.mcp.json`, `~/.claude.json`,
`~/.codex/config.toml`), with HOME and the tool-list cache in that folder too, and `mcp-cli` and `python` on PATH
meaning this checkout's. A line that serves is started, spoken to by a real client (MCP over stdio or streamable
HTTP, and the OpenAPI surface) and stopped. The lines of a block run in order, like a shell session. Also run: the
`python` blocks (a block starting `# NAME.py` is saved as that file for the others to use), the `pdf ...` walk at
the top and every `pdf ...` call in the text (through `mcp_cli.testing.invoke`). The config blocks are loaded, the
links between the documents checked (each to a page and a section that exist), and the site's nav and README's list
held to the pages of docs/. The Layout table (docs/layout.md) is held to the package by tests/test_layout.py.

What the test changes is in REWRITES, what it cannot run in NOT_RUN, each with its reason. A new example needs an
entry in EXPECT saying what it must print: an edited one fails until its entry follows. A line shown in several
documents has one entry and runs in each.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mcp_cli.testing import invoke, text

from .conftest import NODE_BIN, ROOT, budget, free_port, wait_for_port

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]

NOT_RUN = {
    "bash .ci/run": "it installs the test dependencies and runs this suite, this test included",
}
REWRITES = [  # (what the README says, what the test runs, why)
    (
        "pip install -e . -r skills/pdf/requirements.txt && ",
        "",
        "installing: the suite runs where mcp-cli and the skill's requirements are installed already",
    ),
    ("192.168.1.5", "127.0.0.1", "an address of the reader's network; with MCP_CLI_TOKEN set, loopback asks the same"),
    ("8000", "{port}", "a free port"),
]


@dataclass
class Run:
    """A command that must end with `status` and print `out` (stdout or stderr; a pattern where what it prints
    depends on the examples run before it), leaving `files` behind, each holding its text."""

    out: str | re.Pattern[str]
    status: int = 0
    files: dict[str, str] = field(default_factory=dict)
    own_cache: bool = False  # run on a copy of the tool-list cache (the line empties it)


@dataclass
class Serve:
    """A server: its one tool's root help (`--help`, over each surface it serves) must hold `out`."""

    out: str


@dataclass
class Export:
    """`export NAME=$(...)`: the variable holds a value for the rest of its block."""


EXPECT: dict[str, Run | Serve | Export] = {
    # Quick start (README, docs/getting-started.md)
    "pip install -e . -r skills/pdf/requirements.txt && python examples/walkthrough.py": Run("Did you mean `extract`?"),
    # README: one example of each thing people do
    "mcp-cli serve .mcp.json": Serve("memory"),
    "mcp-cli run skills/pdf -- text extract report.pdf --pages 1-3": Run("Report line 0,"),
    # docs/getting-started.md: every command
    "mcp-cli run skills/pdf -- --help": Run("Domains:"),
    'mcp-cli run skills/pdf -- documents create --out a.pdf --text "Hello, PDF"': Run(
        "wrote a.pdf", files={"a.pdf": "%PDF"}
    ),
    "mcp-cli run skills/pdf -- text extract a.pdf": Run("Hello, PDF"),
    "mcp-cli serve skills/pdf": Serve("Extract text content from PDFs."),
    "mcp-cli build skills/pdf": Run("built pdf-mcp/", files={"pdf-mcp/pyproject.toml": 'name = "pdf-mcp"'}),
    "mcp-cli serve ~/.claude.json": Serve("memory"),
    "mcp-cli serve .mcp.json --http 127.0.0.1:8000": Serve("memory"),
    "mcp-cli serve .mcp.json --openapi 8000": Serve("memory"),
    "mcp-cli wrap ~/.codex/config.toml -o my-tools": Run("built my-tools/", files={"my-tools/pyproject.toml": ""}),
    "mcp-cli inspect .mcp.json": Run(" time get-current-time"),  # the root: the project folder's name
    "mcp-cli doctor .mcp.json": Run("2 servers: 2 ok, 0 failed"),
    "mcp-cli run .mcp.json -- search what time is it": Run("time get-current-time"),
    "mcp-cli tokens .mcp.json": Run("up front, one mcp-cli tool"),
    # shown twice: the second run finds it "already registered with claude-code", and the file's servers kept
    "mcp-cli add claude-code skills/pdf": Run("registered with claude-code", files={"~/.claude.json": '"time"'}),
    "mcp-cli export .mcp.json -o ~/.claude/skills/team-tools": Run(
        "exported skill 'team-tools'", files={"~/.claude/skills/team-tools/SKILL.md": "name: team-tools"}
    ),
    "mcp-cli cache": Run("tool lists are kept 24 h"),
    "mcp-cli daemon status": Run("no daemon runs"),  # the tests run `mcp-cli run` in-process (tests/conftest.py)
    # the servers of the JSON configs and of Codex's (another environment), and whatever else the examples served
    "mcp-cli cache --clear": Run(re.compile(r"deleted [1-9]\d* cached file\(s\)"), own_cache=True),
    # docs/pipelines.md
    "mcp-cli run examples/demo/demo.json -- math mean 1 2 3 4 '|' jq .mean": Run("2.5"),
    "mcp-cli run examples/demo/demo.json -- text upper hi ';' math add 2 3": Run("[2/2] math add 2 3\n5"),
    "mcp-cli run examples/demo/demo.json -- math mean 2 4 9 '|' jq '[.count, .median]' '|' each math add {} 10": Run(
        '{"item": 4, "ok": true, "output": 14}'
    ),
    "mcp-cli run examples/demo/demo.json -- math mean 2 4 9 '|' save mean.json": Run(
        "Saved 38 bytes to mean.json: a JSON object of 3 keys", files={"mean.json": '"median": 4'}
    ),
    "mcp-cli run examples/demo/demo.json -- --dry-run math add 2 40 '|' jq '. * 2'": Run("Dry run: 2 stages"),
    "mcp-cli run .mcp.json -- time get-current-time --timezone Europe/Paris '|' jq '{time: \"12:00\", source_timezone: "
    ".timezone, target_timezone: \"Asia/Tokyo\"}' '|' time convert-time": Run('"timezone": "Asia/Tokyo"'),
    # docs/trees.md
    "mcp-cli run examples/demo/demo.json -- math add 2 40": Run("42"),
    "mcp-cli run examples/demo/demo.json -- files list examples/demo": Run("demo.json"),
    "mcp-cli run examples/demo/demo.json -- math ad": Run("Did you mean `add`?", status=2),
    "mcp-cli run hello:tree -- greet Ada --shout": Run("HELLO, ADA!"),
    "mcp-cli serve hello:tree": Serve("greet"),
    # docs/http.md, docs/surfaces.md
    "export MCP_CLI_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')": Export(),
    "mcp-cli serve .mcp.json --http 192.168.1.5:8000 --allow-host mcp.example.com": Serve("memory"),
    "mcp-cli serve .mcp.json --openapi 192.168.1.5:8000": Serve("memory"),
}


# -- reading the documents ---------------------------------------------------------------------------------------


@dataclass
class Block:
    info: str  # the fence's language: bash, python, json, ...; "" for none
    body: str
    line: int  # of the opening fence, 1-based
    file: str = ""  # the document's path in the repository

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def parse(document: str, file: str = "") -> tuple[list[Block], str]:
    """The fenced blocks (a fence at the start of a line), and the text outside them."""
    blocks, prose, lines = [], [], document.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = lines.index("```", i + 1)
            blocks.append(Block(lines[i][3:].strip(), "\n".join(lines[i + 1 : end]) + "\n", i + 1, file))
            i = end + 1
        else:
            prose.append(lines[i])
            i += 1
    return blocks, "\n".join(prose)


PARSED = {
    path.relative_to(ROOT).as_posix(): parse(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    for path in DOCS
}
BLOCKS = [block for blocks, _ in PARSED.values() for block in blocks]
PROSE = {file: prose for file, (_, prose) in PARSED.items()}


def command(line: str) -> str:
    """A line without its trailing comment."""
    return re.sub(r"(^|\s+)#(\s.*)?$", "", line).strip()


def of(info: str, holding: str = "") -> list[Block]:
    return [b for b in BLOCKS if b.info == info and holding in b.body]


def one(info: str, holding: str) -> str:
    """The body of the blocks of `info` holding `holding`: shown at least once, the same wherever shown."""
    bodies = {b.body for b in of(info, holding)}
    assert len(bodies) == 1, (
        f"{info} blocks holding {holding!r} differ or are missing: {[b.where for b in of(info, holding)]}"
    )
    return bodies.pop()


def walks() -> list[Block]:
    """Blocks without a language whose every line is a `pdf ...` call: the walk at the top."""
    return [b for b in BLOCKS if not b.info and all(line.startswith("pdf ") for line in b.body.splitlines())]


def named(block: Block) -> str | None:
    """`hello.py` for a python block that starts `# hello.py`: a file the examples use."""
    first = block.body.splitlines()[0]
    found = re.fullmatch(r"# (\w+\.py)", first)
    return found.group(1) if found else None


def test_every_block_is_of_a_kind_this_test_knows():
    known = {"bash", "python", "json", "toml", "yaml", "text"}
    unknown = [(b.where, b.info) for b in BLOCKS if b.info not in known and b not in walks()]
    assert not unknown, f"blocks this test does not know what to do with (where, language): {unknown}"


def test_every_bash_line_is_run_or_says_why_not():
    lines = [command(line) for b in of("bash") for line in b.body.splitlines() if command(line)]
    missing = [line for line in lines if line not in EXPECT and line not in NOT_RUN]
    assert not missing, f"examples without an expectation in EXPECT (or a reason in NOT_RUN): {missing}"
    stale = [line for line in [*EXPECT, *NOT_RUN] if line not in lines]
    assert not stale, f"EXPECT or NOT_RUN names lines no document has any longer: {stale}"


# -- the folder the examples run in -------------------------------------------------------------------------------


def local(servers: dict) -> dict:
    """The documents' servers, started from what the test dependencies installed: `npx -y PACKAGE` and `uvx PACKAGE`
    would fetch them from the package registries."""
    out = {}
    for name, entry in servers.items():
        args = [a for a in entry.get("args", []) if a != "-y"]
        if entry["command"] == "npx":  # tests/node holds the reference servers (npm ci --prefix tests/node)
            binary = NODE_BIN / f"mcp-{args[0].rsplit('/', 1)[-1]}"
            assert binary.exists(), f"{binary}: run `npm ci --prefix tests/node` (or .ci/run)"
            entry = {**entry, "command": str(binary), "args": args[1:]}
        elif entry["command"] == "uvx":  # mcp-server-time is a test extra
            entry = {**entry, "command": args[0], "args": args[1:]}
        out[name] = entry
    return out


class Workspace:
    def __init__(self, folder: Path) -> None:
        self.folder, self.home, self.cache = folder, folder / "home", folder / "cache"
        self.runtime = folder / "rt"
        self.runtime.mkdir(mode=0o700)
        self.ran: set[tuple[str, frozenset[str]]] = set()  # lines run here, with the variables exported before them
        for name in ("skills", "examples"):
            shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        bin_dir = folder / "bin"
        bin_dir.mkdir()
        script = Path(sys.executable).parent / "mcp-cli"  # the installed command, else `python -m mcp_cli`
        if script.exists():
            (bin_dir / "mcp-cli").symlink_to(script)
        else:
            (bin_dir / "mcp-cli").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcp_cli "$@"\n')
            (bin_dir / "mcp-cli").chmod(0o755)
        # a script, not a link: a link to a virtual environment's python, outside its folder, finds no pyvenv.cfg
        # beside it and runs without the environment's packages
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (bin_dir / "python").chmod(0o755)
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            "MCP_CLI_CACHE_DIR": str(self.cache),
            "MCP_CLI_RUNTIME_DIR": str(self.runtime),  # `mcp-cli daemon status` sees the examples' daemons only
            "PYTHONPATH": path,  # this checkout's mcp_cli, wherever the example runs
        }
        self.env.pop("MCP_CLI_TOKEN", None)
        servers = local(json.loads(one("json", '"mcpServers"'))["mcpServers"])
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
        self.home.mkdir()
        (self.home / ".claude.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
        from mcp_cli.compat import toml_loads

        tables = local(toml_loads(one("toml", "[mcp_servers."))["mcp_servers"])
        (self.home / ".codex").mkdir()
        (self.home / ".codex" / "config.toml").write_text(
            "".join(
                f"[mcp_servers.{n}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in e.items()) + "\n"
                for n, e in tables.items()
            )
        )
        for block in of("python"):
            if named(block):
                (folder / named(block)).write_text(block.body)  # the same name twice would be the same file
        report = invoke(
            folder / "skills" / "pdf",
            ["documents", "create", "--out", "report.pdf", "--text-file", str(self.pages())],
            cwd=folder,
        )
        assert report.ok, report.text()
        # Tool lists asked for once, with time to answer on a loaded machine; every example after reads the cache.
        warm = self.sh("mcp-cli inspect .mcp.json --startup-timeout 120", timeout=budget(50))
        assert warm.returncode == 0 and "time get-current-time" in warm.stdout, warm.stderr

    def pages(self) -> Path:
        """A text long enough for a few pages."""
        notes = self.folder / "notes.txt"
        notes.write_text("".join(f"Report line {i}, one of many.\n" for i in range(150)))
        return notes

    def sh(self, line: str, env: dict | None = None, timeout: float = budget(30)) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", line], cwd=self.folder, env=env or self.env, capture_output=True, text=True, timeout=timeout
        )


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("readme"))


def rewrite(line: str, port: int) -> str:
    for said, runs, _why in REWRITES:
        line = line.replace(said, runs.format(port=port))
    return line


# -- running the examples -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", of("bash"), ids=lambda b: b.where)
def test_bash_block(ws, block):
    """Each line of the block, in order; a line that another document shows too (README's examples are also in
    docs/) runs once in the workspace, where what it left behind stays for the lines after it."""
    env = dict(ws.env)
    for said in block.body.splitlines():
        line = command(said)
        seen = (line, frozenset(env.items() - ws.env.items()))
        if not line or line in NOT_RUN or seen in ws.ran:
            continue
        ws.ran.add(seen)
        expect, port = EXPECT[line], free_port()
        runs = rewrite(line, port)
        where = f"{block.where}: {line}" + (f"\n(run as: {runs})" if runs != line else "")
        if isinstance(expect, Export):
            name = re.match(r"export (\w+)=", line).group(1)
            value = ws.sh(f'{runs}; printf %s "${name}"', env).stdout
            assert len(value) >= 32, where
            env[name] = value
        elif isinstance(expect, Serve):
            serve(ws, runs, port, env, expect.out, where)
        else:
            run(ws, runs, env, expect, where)


def run(ws: Workspace, line: str, env: dict, expect: Run, where: str) -> None:
    if expect.own_cache:
        copy = ws.folder / "cache-copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(ws.cache, copy)
        env = {**env, "MCP_CLI_CACHE_DIR": str(copy)}
    done = ws.sh(line, env)
    said = done.stdout + done.stderr
    printed = expect.out in said if isinstance(expect.out, str) else bool(expect.out.search(said))
    assert (done.returncode, printed, "Traceback" in said) == (expect.status, True, False), f"{where}\n{said}"
    for name, holds in expect.files.items():
        path = ws.home / name.removeprefix("~/") if name.startswith("~/") else ws.folder / name
        assert path.exists() and holds in path.read_text(errors="replace"), f"{where}: {name} does not hold {holds!r}"


def serve(ws: Workspace, line: str, port: int, env: dict, out: str, where: str) -> None:
    argv = shlex.split(line)
    if "--http" not in argv and "--openapi" not in argv:
        anyio.run(stdio, ws, line, env, out, where)
        return
    token = env.get("MCP_CLI_TOKEN")
    log = ws.folder / f"serve-{port}.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=ws.folder, env=env, stdout=err, stderr=err)
    try:
        wait_for_port(port, proc)
        base = f"http://127.0.0.1:{port}"
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        if token:
            assert httpx2.get(f"{base}/openapi.json", timeout=budget(5)).status_code == 401, where
        document = httpx2.get(f"{base}/openapi.json", headers=auth, timeout=budget(5))
        assert document.status_code == 200 and "/run" in document.json()["paths"], where
        for host in [argv[i + 1] for i, a in enumerate(argv) if a == "--allow-host"]:
            assert (
                httpx2.get(f"{base}/openapi.json", headers={**auth, "Host": host}, timeout=budget(5)).status_code == 200
            )
        ran = httpx2.post(f"{base}/run", json={"argv": ["--help"]}, headers=auth, timeout=budget(10)).json()
        assert ran["ok"] and out in ran["output"], f"{where}\n{ran}"
        if "--http" in argv:
            anyio.run(streamable, f"{base}/mcp", auth, out, where)
    finally:
        proc.terminate()
        proc.wait(timeout=budget(5))
    assert "Traceback" not in log.read_text(), f"{where}\n{log.read_text()}"


async def stdio(ws: Workspace, line: str, env: dict, out: str, where: str) -> None:
    server = StdioServerParameters(command="bash", args=["-c", f"exec {line}"], cwd=str(ws.folder), env=env)
    async with Client(server) as client:
        await helps(client, out, where)


async def streamable(url: str, auth: dict, out: str, where: str) -> None:
    async with httpx2.AsyncClient(headers=auth, timeout=budget(10)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            await helps(client, out, where)


async def helps(client, out: str, where: str) -> None:
    (tool,) = (await client.list_tools()).tools
    result = await client.call_tool(tool.name, {"argv": ["--help"]})
    assert not result.is_error and out in text(result), f"{where}\n{text(result)}"


@pytest.mark.parametrize("line", sorted({line for b in walks() for line in b.body.splitlines()}))
def test_the_walk_at_the_top(ws, line):
    argv = shlex.split(line.split("->")[0])[1:]
    result = invoke(ws.folder / "skills" / "pdf", argv, cwd=ws.folder)
    assert result.ok and result.output.strip(), result.text()
    assert "Usage:" in result.output if "--help" in argv else "Report line 0," in result.output


PDF_CALLS = sorted({call for prose in PROSE.values() for call in re.findall(r"`pdf ([^`]+)`", prose)})


@pytest.mark.parametrize("call", PDF_CALLS)
def test_pdf_calls_in_the_text(ws, call):
    result = invoke(ws.folder / "skills" / "pdf", shlex.split(call), cwd=ws.folder)
    assert result.ok and result.output.strip(), f"`pdf {call}`: {result.text()}"


def test_pdf_calls_in_the_text_are_found():
    assert "docs forms giving-values" in PDF_CALLS and len(PDF_CALLS) >= 3


@pytest.mark.parametrize("block", [b for b in of("python") if not named(b)], ids=lambda b: b.where)
def test_python_block(ws, block):
    script = ws.folder / f"{Path(block.file).stem}_{block.line}.py"
    script.write_text(block.body)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ws.folder, env=ws.env, capture_output=True, text=True, timeout=budget(50)
    )
    assert done.returncode == 0, f"{block.where}\n{done.stdout}{done.stderr}"


# -- the configuration files shown --------------------------------------------------------------------------------


def test_the_scopes_file_loads(tmp_path):
    from mcp_cli.surfaces import scopes

    (tmp_path / "scopes.toml").write_text(one("toml", "[[scope]]"))
    loaded = scopes.load(tmp_path / "scopes.toml", {"TEAM_A_TOKEN": "a token of team a"})
    assert [(s.name, s.paths, s.read_only) for s in loaded] == [
        ("team-a", ("github *", "jira issues *"), False),
        ("auditors", ("*",), True),
    ]


def test_the_manifest_is_read_without_warnings(tmp_path):
    from mcp_cli.sources.skill import manifest

    (tmp_path / "mcp-cli.yaml").write_text(one("yaml", "steps:"))
    warnings: list[str] = []
    read = manifest.read(tmp_path, warnings)
    assert (set(read), warnings) == (set(manifest.KEYS), [])


# -- links, the site's nav, README's list -------------------------------------------------------------------------


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub and MkDocs both make it (for the headings these documents have)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(file: str) -> set[str]:
    return {slug(title) for title in re.findall(r"^#{1,4} (.+)$", PROSE[file], re.M)}


LINKS = [(file, target) for file, prose in PROSE.items() for target in re.findall(r"\]\(([^)\s]+)\)", prose)]


@pytest.mark.parametrize("file,target", [(f, t) for f, t in LINKS if "://" not in t], ids=lambda x: x)
def test_each_link_names_a_file_and_a_section_it_has(file, target):
    path, _, anchor = target.partition("#")
    linked = (ROOT / file).parent / path if path else ROOT / file
    assert linked.exists(), f"{file}: {target}: no such file"
    if anchor:
        named = linked.resolve().relative_to(ROOT).as_posix()
        assert named in PROSE and anchor in anchors(named), f"{file}: {target}: no such section"


def test_links_are_found():
    assert len(LINKS) >= 50 and any(f == "README.md" and t.startswith("docs/") for f, t in LINKS)


def pages() -> set[str]:
    return {path.name for path in (ROOT / "docs").glob("*.md")}


def test_the_site_lists_every_page_once():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def listed(entries) -> list[str]:
        found = []
        for entry in entries:
            value = entry if isinstance(entry, str) else next(iter(entry.values()))
            found += listed(value) if isinstance(value, list) else [value]
        return found

    nav = listed(config["nav"])
    assert sorted(nav) == sorted(pages()), set(nav) ^ pages()


def test_readme_stays_short():
    """README is for a newcomer: what it is, two commands, one example of each thing done; the reference is docs/."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_readme_links_every_page():
    linked = {t.removeprefix("docs/").partition("#")[0] for f, t in LINKS if f == "README.md"}
    assert pages() <= linked, pages() - linked
