"""A skill's documents: found the way authors name them, read with a real markdown parser, every line reachable
through sections (by path) and parts (`--part N`). Fixture: tests/fixtures/docs/handbook."""

import re

import anyio
import pytest

from mcp_cli.engine import answers, markdown
from mcp_cli.engine.runtime import Runtime
from mcp_cli.result import tokens
from mcp_cli.sources.skill.folder import load
from mcp_cli.tree import Topic

from .conftest import ROOT, served, text
from .skills import write_skill

HANDBOOK = ROOT / "tests" / "fixtures" / "docs" / "handbook"
TOPICS = [
    "skill",
    "grader",
    "history",
    "catalog",
    "fences",
    "layout",
    "links",  # every .md in a sub-folder, by path
    "reference",
    "forms",
    "checklist",
    "setup",
    "troubleshooting",
    "quick-start",
    "advanced",  # beside SKILL.md
]


def handbook(budget: int | None = None, cap: int | None = None):
    tree, warnings = load(HANDBOOK)
    tree.settings.help_budget = budget or tree.settings.help_budget
    if cap:  # characters a document's part may take: a budget whose room is that
        tree.settings.budget = cap * 2 // 5 + answers.NOTE
    return tree, warnings


def run(tree, argv: list[str]):
    return anyio.run(Runtime(tree).call, argv)


def ok(tree, argv: list[str]) -> str:
    result = run(tree, argv)
    assert result.ok, result.message
    return result.output


def topics(tree) -> dict[str, Topic]:
    return {t.name: t for t in tree.root.child("docs").children}


def test_documents_are_found_where_and_as_authors_name_them():
    tree, _ = handbook()
    found = topics(tree)
    assert list(found) == TOPICS
    # "see REFERENCE.md", "read forms.md", `CHECKLIST.md`, {baseDir}/SETUP.md, ${CLAUDE_SKILL_DIR}/TROUBLESHOOTING.md,
    # [quick start](<Quick start.md>), and ADVANCED.md, named only by REFERENCE.md; README.md and LICENSE.md are
    # named by nothing
    assert found["advanced"].text.startswith("# Advanced tuning")
    assert found["grader"].summary == "Grades an answer against the checklist and says what is missing."
    assert found["forms"].summary == "Filling in forms"  # a setext title


def test_only_links_that_go_nowhere_are_warned_about():
    _, warnings = handbook()
    assert [w for w in warnings if "links to" in w] == [
        "SKILL.md: links to references/retired.md, which is not in the skill folder",
        "references/links.md: links to gone.md, which is not in the skill folder",
    ]  # not the links in code, nor {baseDir}/SETUP.md, nor a file the user writes (NOTES-FOR-USER.md)


def test_topic_names_are_unique_and_stable(tmp_path):
    skill = tmp_path / "names"
    for rel in ("references/api.md", "agents/api.md", "sub/SKILL.md", "references/Überblick.md", "Notes.md"):
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_text(f"# {rel}\n")
    (skill / "SKILL.md").write_text("---\nname: names\ndescription: Names.\n---\nRead `notes.md`.\n")
    tree, _ = load(skill)
    assert list(topics(tree)) == ["skill", "agents-api", "references-api", "überblick", "sub-skill", "notes"]


def test_a_long_word_does_not_stall_finding_mentions(tmp_path):
    # an inline SVG path or a hex dump is one long run of word characters, dots and dashes: each character of it
    # was a start the mention pattern scanned to the run's end from (hours for this one), now only its first
    skill = tmp_path / "svg"
    skill.mkdir()
    svg = "M0.5-1.25-3" * 40_000
    body = f'See REF.md and <svg><path d="{svg}"/></svg> and `{"ab/" * 40_000}x`.\n'
    (skill / "SKILL.md").write_text(f"---\nname: svg\ndescription: Svg.\n---\n{body}")
    (skill / "REF.md").write_text("# Ref\n")
    tree, _ = load(skill)
    assert list(topics(tree)) == ["skill", "ref"]


def test_second_title_level_heading_and_long_intro_are_kept():
    tree, _ = handbook()
    layout = ok(tree, ["docs", "layout"])
    assert "Intro more line 30:" in layout  # the whole intro (4,000+ characters), not a preview
    assert re.findall(r"^  (\S+)", layout, re.M) == ["hosts", "disks", "appendix"]
    appendix = ok(tree, ["docs", "layout", "appendix"])
    assert appendix.startswith("# Appendix\n\nText between") and "Glossary line 25:" in appendix
    assert ok(tree, ["docs", "layout", "appendix", "glossary"]).startswith("## Glossary")


def test_fences_of_any_length_hold_no_headings():
    tree, _ = handbook()
    outline = markdown.parse(topics(tree)["fences"].text).root
    assert [c.slug for c in outline.children] == ["a-skill-file", "tilde-and-indented-code", "reading-the-output"]
    sample = ok(tree, ["docs", "fences", "a-skill-file"])
    assert "# install the tool first\n" in sample and "## Not a heading: inside the outer fence\n````" in sample
    assert "After the fence line 20:" in sample


def test_setext_and_nested_sections_by_path():
    tree, _ = handbook()
    forms = ok(tree, ["docs", "forms"])
    assert forms.startswith("handbook docs forms - Filling in forms\n\nFilling in forms\n================")
    assert re.findall(r"^  (\S+)", forms, re.M) == ["filling", "signing"]
    filling = ok(tree, ["docs", "forms", "filling"])  # over the budget: its own text, then its sections
    assert "Filling intro line 4:" in filling and "Checkbox line 1:" not in filling
    assert "checkboxes   Checkboxes (3,171 chars, 1 sub-section)" in filling
    deep = ok(tree, ["docs", "forms", "filling", "checkboxes", "tri-state-boxes"])
    assert deep.startswith("#### Tri-state boxes") and "Text field line" not in deep
    assert ok(tree, ["docs", "forms", "fill", "check", "tri", "state"]) == deep  # prefixes, words joined by -
    miss = run(tree, ["docs", "forms", "filling", "checkbx"])
    assert miss.error == "not_found"
    assert "`handbook docs forms filling` has no section `checkbx`. Did you mean `checkboxes`?" in miss.message
    assert "Run `handbook docs forms filling <section>` to read one." in miss.message


def test_a_section_over_the_output_cap_comes_in_parts():
    tree, _ = handbook(cap=20_000)
    section = markdown.parse(topics(tree)["catalog"].text)
    codes = section.root.children[0]
    whole = section.text(codes.start, codes.end)
    first = ok(tree, ["docs", "catalog", "codes"])
    assert "\n\n[Part 1 of 2. Run `handbook docs catalog codes --part 2` for the next.]" in first
    last = ok(tree, ["docs", "catalog", "codes", "--part=2"])
    assert last.endswith("\n\n[Part 2 of 2. The last part.]\n")
    pieces = [first.split("\n\n[Part")[0], last.split("\n\n[Part")[0]]
    assert "\n".join(pieces) == whole and all(tokens(p) <= tree.settings.budget for p in (first, last))
    assert any("```text\n# the codes come from this table in the source\nE0001 .. E0360\n```" in p for p in pieces)
    for argv, words in (
        (["--part", "3"], "`handbook docs catalog codes` has 2 parts; --part takes 1 to 2."),
        (["--part", "x"], "--part takes a part number (1, 2, ...), not 'x'; give a whole number in the digits 0-9"),
        (["--part", "²"], "--part takes a part number (1, 2, ...), not '²'; give a whole number in the digits 0-9"),
        (["--part", "٢"], "--part takes a part number (1, 2, ...), not '٢'; write it in the digits 0-9: 2."),
        (["--part", "0"], "--part takes a part number (1, 2, ...), not '0'."),
        (["--parts"], "unknown option --parts"),
    ):
        result = run(tree, ["docs", "catalog", "codes", *argv])
        assert result.error == "usage" and words in result.message


def reachable(tree, topic: str) -> list[str]:
    """Every answer reachable from a topic: each part named in a note, each section named in a listing."""
    answers, todo = [], [["docs", topic]]
    while todo:
        argv = todo.pop()
        parts = [ok(tree, argv)]
        count = re.search(r"\[Part 1 of (\d+)\.", parts[0])
        parts += [ok(tree, [*argv, "--part", str(n)]) for n in range(2, int(count.group(1)) + 1)] if count else []
        for out in parts:
            assert "[cut to the" not in out and tokens(out) <= tree.settings.budget
            listing = re.search(r"^Sections \(.*?\n(.*?)\n\n", out, re.M | re.S)
            todo += [[*argv, slug] for slug in re.findall(r"^  (\S+)", listing.group(1), re.M)] if listing else []
        answers += parts
    return answers


@pytest.mark.parametrize("budget, cap", [(None, None), (400, 2500)])
def test_every_line_of_every_document_is_reachable(budget, cap):
    tree, _ = handbook(budget, cap)
    for name, topic in topics(tree).items():
        seen = {line for answer in reachable(tree, name) for line in answer.splitlines()}
        lost = [line for line in topic.text.splitlines() if line.strip() and line not in seen]
        assert not lost, f"{name}: {len(lost)} lines not reachable, e.g. {lost[:3]}"
    if cap:  # an intro over the cap is in parts too, followed by the sections
        layout = ok(tree, ["docs", "layout"])
        assert "[Part 1 of " in layout and "Intro line 1:" in layout and "\nSections (" not in layout
        last = ok(tree, ["docs", "layout", "--part", re.search(r"Part 1 of (\d+)", layout).group(1)])
        assert "\nSections (" in last and "The last part." in last


def test_a_listing_over_the_output_cap_comes_in_parts(tmp_path):
    entries = "".join(f"## Entry number {i} of the index\n\nAbout entry {i}.\n\n" for i in range(1, 601))
    index = {"references/index.md": f"# Index\n\n{entries}"}
    skill = write_skill(tmp_path / "many", "Many sections.", index, body="See the index.\n")
    tree, _ = load(skill)
    answers = reachable(tree, "index")
    assert len(answers) > 600 + 2  # every entry, and the listing in more than one part
    listed = re.findall(r"^  (entry-number-\S+)", "\n".join(answers), re.M)
    assert listed == [f"entry-number-{i}-of-the-index" for i in range(1, 601)]


def test_a_paragraph_over_a_rule_is_listed_by_its_start(tmp_path):
    # a paragraph right over a `---` line is a setext heading: listed whole, its row alone outgrew the output cap
    paragraph = " ".join(f"word{i}" for i in range(4000))
    filler = "A line of filler text.\n" * 1000
    notes = {"references/notes.md": f"# Notes\n\n{paragraph}\n---\n\n{filler}\n## Next\n\n{filler}"}
    skill = write_skill(tmp_path / "rule", "Rule.", notes, body="See the notes.\n")
    tree, _ = load(skill)
    answers = reachable(tree, "notes")
    assert all("[cut to the" not in a for a in answers)
    assert re.search(r"^  word0-word1\S*\s+word0 word1 .{60,80}\.\.\. \(\d", "\n".join(answers), re.M)


def test_pages_keep_a_fence_whole_when_it_fits():
    lines = [f"Paragraph line {i} with some words in it." for i in range(20)]
    fence = ["```python", *[f"# step {i}" for i in range(8)], "```"]
    doc = markdown.parse("\n".join([*lines[:10], "", *fence, "", *lines[10:]]))
    pages = doc.pages(0, len(doc.lines), 600)
    assert any("\n".join(fence) in p for p in pages)  # the fence starts a page rather than being split
    assert [x for p in pages for x in p.splitlines() if x] == [x for x in doc.lines if x]  # none lost or repeated
    big = markdown.parse("```\n" + "\n".join(f"row {i}" for i in range(200)) + "\n```")
    assert len(big.pages(0, len(big.lines), 300)) > 1  # a fence longer than a page is split, not dropped
    long_line = markdown.parse("x" * 1000)
    assert long_line.pages(0, 1, 300) == ["x" * 300] * 3 + ["x" * 100]


def test_front_matter_is_text_not_a_heading():
    doc = markdown.parse("---\nname: grader\ndescription: Grades.\n---\n\n# Grader\n\nBody.\n")
    assert (doc.root.heading, doc.root.children, doc.front) == ("Grader", [], "name: grader\ndescription: Grades.")
    assert markdown.parse("# Notes\n\ndescription: not front matter\n").front == ""


@pytest.mark.anyio
async def test_documents_over_a_real_stdio_server():
    async with served("serve", str(HANDBOOK)) as client:

        async def call(*argv: str) -> str:
            result = await client.call_tool("handbook", {"argv": list(argv)})
            assert not result.is_error, text(result)
            return text(result)

        assert re.findall(r"^  (\S+)", (await call("docs")).partition("Topics:")[2], re.M) == TOPICS
        assert (await call("docs", "forms", "filling", "checkboxes", "tri-state-boxes")).startswith("#### Tri-state")
        assert re.search(r"\[Part 2 of \d\.", await call("docs", "catalog", "codes", "--part", "2"))  # as budgets say
        assert "Every setting of the archive. For tuning beyond these, see ADVANCED.md." in await call(
            "docs", "reference"
        )
        result = await client.call_tool("handbook", {"command": "docs forms signing extra"})
        assert result.is_error and "`handbook docs forms signing` has no sections" in text(result)
