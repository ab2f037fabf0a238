"""Skills served directly (`mcp-cli serve SKILL_DIR`) through a real MCP client: scripts run with argv checked first."""

import json

import pytest

from .conftest import ROOT, served, text

pytestmark = pytest.mark.anyio
SKILLS = ROOT / "tests" / "fixtures" / "skills"


@pytest.fixture(scope="module")
def notes_log(tmp_path_factory):
    return tmp_path_factory.mktemp("log") / "notes.log"


@pytest.fixture(scope="module")
async def argtool(notes_log):
    async with served("serve", str(SKILLS / "argtool"), env={"NOTES_LOG": str(notes_log)}) as client:
        yield client


async def call(client, name, argv):
    result = await client.call_tool(name, {"argv": argv})
    return result, text(result)


async def test_help_at_each_level(argtool):
    _, root = await call(argtool, "argtool", ["--help"])
    assert "Domains:\n  notes" in root and "Commands:\n  count" in root
    _, group = await call(argtool, "argtool", ["notes"])
    assert "add     Add a note." in group
    _, cmd = await call(argtool, "argtool", ["notes", "add", "--help"])
    assert "argtool notes add [--tag TEXT] [--priority {1,2,3,4,5}] [--pinned] TITLE" in cmd


async def test_script_runs_with_argv_passed_verbatim(argtool, notes_log):
    result, out = await call(argtool, "argtool", ["notes", "add", "My note", "-t", "a", "--tag", "b", "--pinned"])
    assert not result.is_error, out
    assert json.loads(out) == {"command": "add", "pinned": True, "priority": 3, "tag": ["a", "b"], "title": "My note"}
    assert notes_log.read_text().splitlines()[-1] == "add My note -t a --tag b --pinned"
    assert result.structured_content["exit_code"] == 0


async def test_alias_of_a_subcommand(argtool):
    result, out = await call(argtool, "argtool", ["notes", "dump", "x.json", "-vv"])
    assert json.loads(out)["paths"] == ["x.json"] and json.loads(out)["verbose"] == 2


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
    result, out = await call(argtool, "argtool", argv)
    assert result.is_error and words in out, out
    assert (notes_log.read_text() if notes_log.exists() else "") == before


async def test_nonzero_exit_is_an_error_with_stderr(argtool):
    result, out = await call(argtool, "argtool", ["notes", "find", "--regex", "("])
    assert result.is_error
    assert result.structured_content["exit_code"] == 1
    assert "notes: bad regex" in result.structured_content["stderr"] and "exited with status 1" in out


async def test_passthrough_python_and_shell_scripts(argtool):
    _, out = await call(argtool, "argtool", ["raw-echo", "a b", "--weird", "$HOME"])
    assert out.splitlines() == ["a b", "--weird", "$HOME"]
    _, out = await call(argtool, "argtool", ["count", "1", "2", "3"])
    assert out.strip() == "3"
    _, out = await call(argtool, "argtool", ["count", "--help"])
    assert "Usage: count.sh [ARGS...]" in out


async def test_docs_topics_and_sections(argtool):
    _, listing = await call(argtool, "argtool", ["docs"])
    assert "guide  The argtool guide" in listing and "faq" in listing
    _, guide = await call(argtool, "argtool", ["docs", "guide"])
    assert "## Exporting" in guide
    _, section = await call(argtool, "argtool", ["docs", "guide", "finding-notes"])
    assert section.startswith("## Finding notes") and "Exporting" not in section
    result, out = await call(argtool, "argtool", ["docs", "guide", "nowhere"])
    assert result.is_error and "has no section `nowhere`" in out


async def test_click_skill_end_to_end():
    async with served("serve", str(SKILLS / "clicktool")) as client:
        argv = ["images", "convert", "a.png", "b.png", "--to", "webp", "--tag", "x", "--tag", "y", "--overwrite", "-vv"]
        result, out = await call(client, "clicktool", argv)
        assert not result.is_error, out
        assert json.loads(out) == {
            "sources": ["a.png", "b.png"],
            "fmt": "webp",
            "quality": 90,
            "tag": ["x", "y"],
            "overwrite": True,
            "dry_run": False,
            "verbose": 2,
        }
        _, out = await call(client, "clicktool", ["images", "meta", "show", "p.png", "--scale", "2"])
        assert json.loads(out) == {"path": "p.png", "scale": 2.0}
        _, out = await call(client, "clicktool", ["images", "info", "q.png"])
        assert json.loads(out) == {"info": "q.png"}
        result, out = await call(client, "clicktool", ["images", "convert", "a.png", "--to", "gif"])
        assert result.is_error and "invalid choice: 'gif'" in out


async def test_typer_skill_end_to_end():
    async with served("serve", str(SKILLS / "typertool")) as client:
        argv = ["remind", "add", "call mom", "-w", "now", "--channel", "sms", "--repeat", "2", "--urgent", "--tag", "a"]
        result, out = await call(client, "typertool", argv)
        assert not result.is_error, out
        assert json.loads(out) == {
            "text": "call mom",
            "when": "now",
            "channel": "sms",
            "repeat": 2,
            "urgent": True,
            "tags": ["a"],
        }
        _, out = await call(client, "typertool", ["remind", "config", "set", "k", "v", "--force"])
        assert json.loads(out) == {"key": "k", "value": "v", "force": True}
        _, out = await call(client, "typertool", ["remind", "list", "--limit", "3"])
        assert json.loads(out) == {"limit": 3, "out": None}
        result, out = await call(client, "typertool", ["remind", "add", "x", "--repeat", "many"])
        assert result.is_error and "invalid integer value: 'many'" in out
