"""Skills served directly (`mcp-cli serve SKILL_DIR`) through a real MCP client: scripts run with argv checked first."""

import json

import pytest

from mcp_cli.testing import call, ok

from .conftest import ROOT, served

pytestmark = pytest.mark.anyio
SKILLS = ROOT / "tests" / "fixtures" / "skills"


@pytest.fixture(scope="module")
def notes_log(tmp_path_factory):
    return tmp_path_factory.mktemp("log") / "notes.log"


@pytest.fixture(scope="module")
async def argtool(notes_log):
    async with served("serve", str(SKILLS / "argtool"), env={"NOTES_LOG": str(notes_log)}) as client:
        yield client


async def test_help_at_each_level(argtool):
    root = await ok(argtool, "--help")
    assert "Domains:\n  notes" in root and "Commands:\n  count" in root
    group = await ok(argtool, "notes")
    usage = "    [--tag TEXT] [--priority {1,2,3,4,5}] [--pinned] TITLE\n"  # its optional flags too
    assert "add     Add a note with a title and tags.\n" + usage in group
    cmd = await ok(argtool, "notes", "add", "--help")
    assert "argtool notes add [options] TITLE" in cmd  # optional options folded, each in the Options list
    assert all(f"\n  {o}  " in cmd for o in ("--tag, -t TEXT", "--priority {1,2,3,4,5}", "--pinned"))


async def test_script_runs_with_argv_passed_verbatim(argtool, notes_log):
    reply = await call(argtool, "notes", "add", "My note", "-t", "a", "--tag", "b", "--pinned")
    assert reply.ok, reply.text
    assert json.loads(reply.text) == {
        "command": "add",
        "pinned": True,
        "priority": 3,
        "tag": ["a", "b"],
        "title": "My note",
    }
    assert notes_log.read_text().splitlines()[-1] == "add My note -t a --tag b --pinned"
    assert reply.structured["exit_code"] == 0


async def test_alias_of_a_subcommand(argtool):
    dumped = json.loads(await ok(argtool, "notes", "dump", "x.json", "-vv"))
    assert dumped["paths"] == ["x.json"] and dumped["verbose"] == 2


@pytest.mark.parametrize(
    "argv, words",
    [
        (["notes", "add", "x", "--priority", "9"], "invalid choice: 9"),
        (["notes", "add", "x", "--prio", "2"], "unknown option --prio"),
        (["notes", "find", "--title", "a", "--regex", "b"], "not allowed with argument --title"),
        (["notes", "find"], "one of the arguments --title --regex is required"),
        (["notes", "export", "--ratio", "half", "a"], "invalid number value: 'half'"),
        (["notes", "ad", "x"], "Did you mean `add`?"),
    ],
)
async def test_bad_argv_never_starts_the_script(argtool, notes_log, argv, words):
    before = notes_log.read_text() if notes_log.exists() else ""
    reply = await call(argtool, *argv)
    assert not reply.ok and words in reply.text, reply.text
    assert (notes_log.read_text() if notes_log.exists() else "") == before


async def test_nonzero_exit_is_an_error_with_stderr(argtool):
    reply = await call(argtool, "notes", "find", "--regex", "(")
    assert not reply.ok
    assert reply.structured["exit_code"] == 1
    assert "notes: bad regex" in reply.text and "exited with status 1" in reply.text


async def test_passthrough_python_and_shell_scripts(argtool):
    out = await ok(argtool, "raw-echo", "a b", "--weird", "$HOME")
    assert out.splitlines() == ["a b", "--weird", "$HOME"]
    out = await ok(argtool, "count", "1", "2", "3")
    assert out.strip() == "3"
    out = await ok(argtool, "count", "--help")
    assert "Usage: argtool count [ARGS...]" in out and "count.sh" not in out  # the script's usage, as called here


async def test_docs_topics_and_sections(argtool):
    listing = await ok(argtool, "docs")
    assert "guide  The argtool guide" in listing and "faq" in listing
    guide = await ok(argtool, "docs", "guide")
    assert "## Exporting" in guide
    section = await ok(argtool, "docs", "guide", "finding-notes")
    assert section.startswith("## Finding notes") and "Exporting" not in section
    reply = await call(argtool, "docs", "guide", "nowhere")
    assert not reply.ok and "has no section `nowhere`" in reply.text


async def test_click_skill_end_to_end():
    async with served("serve", str(SKILLS / "clicktool")) as client:
        argv = ["images", "convert", "a.png", "b.png", "--to", "webp", "--tag", "x", "--tag", "y", "--overwrite", "-vv"]
        assert json.loads(await ok(client, *argv)) == {
            "sources": ["a.png", "b.png"],
            "fmt": "webp",
            "quality": 90,
            "tag": ["x", "y"],
            "overwrite": True,
            "dry_run": False,
            "verbose": 2,
        }
        out = await ok(client, "images", "meta", "show", "p.png", "--scale", "2")
        assert json.loads(out) == {"path": "p.png", "scale": 2.0}
        out = await ok(client, "images", "info", "q.png")
        assert json.loads(out) == {"info": "q.png"}
        reply = await call(client, "images", "convert", "a.png", "--to", "gif")
        assert not reply.ok and "invalid choice: 'gif'" in reply.text


async def test_typer_skill_end_to_end():
    async with served("serve", str(SKILLS / "typertool")) as client:
        argv = ["remind", "add", "call mom", "-w", "now", "--channel", "sms", "--repeat", "2", "--urgent", "--tag", "a"]
        assert json.loads(await ok(client, *argv)) == {
            "text": "call mom",
            "when": "now",
            "channel": "sms",
            "repeat": 2,
            "urgent": True,
            "tags": ["a"],
        }
        out = await ok(client, "remind", "config", "set", "k", "v", "--force")
        assert json.loads(out) == {"key": "k", "value": "v", "force": True}
        out = await ok(client, "remind", "list", "--limit", "3")
        assert json.loads(out) == {"limit": 3, "out": None}
        reply = await call(client, "remind", "add", "x", "--repeat", "many")
        assert not reply.ok and "invalid integer value: 'many'" in reply.text
        for odd, says in (
            ("²", "give a whole number in the digits 0-9"),
            ("٣", "write it in the digits 0-9: 3"),
            ("9" * 5000, "it has 5,000 digits, more than the 4,300"),
        ):
            reply = await call(client, "remind", "add", "x", "--repeat", odd)  # a script's argparse type=int
            assert not reply.ok and reply.structured["error"] == "usage" and says in reply.text
