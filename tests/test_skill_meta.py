"""A skill's frontmatter as real skills write it, and its whole description as the tool's description."""

import pytest

from mcp_cli.sources.skill.folder import load
from mcp_cli.surfaces.tool import SUMMARY_BUDGET
from mcp_cli.text import clip

from .conftest import served

TRIGGER = "Use this skill when: the user asks to review a pull request, or says 'check this diff'."


def skill(tmp_path, description: str, extra: str = "") -> str:
    folder = tmp_path / "review"
    folder.mkdir()
    frontmatter = f"name: review\ndescription: {description}\n{extra}"
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n\n# Review\n\nBody.\n")
    return str(folder)


@pytest.mark.anyio
async def test_the_tool_description_is_the_whole_skill_description(tmp_path):
    description = "Reviews code changes in any language, explaining each problem found. " + TRIGGER
    async with served("serve", skill(tmp_path, description)) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.description.startswith(description + " ")  # the trigger text survives, colon and all
    assert " Run `docs --help` first: listings show" in tool.description  # a lone domain, named once


def test_a_description_over_the_budget_is_cut_at_a_sentence():
    sentences = [f"Sentence number {i} says something useful about the skill." for i in range(40)]
    cut = clip(" ".join(sentences), SUMMARY_BUDGET)
    assert len(cut) <= SUMMARY_BUDGET and cut.endswith("useful about the skill.")
    assert " ".join(sentences).startswith(cut)
    words = clip("word " * 400, 100)
    assert words.endswith("word...") and len(words) <= 100


def test_an_unquoted_colon_loads_with_a_warning(tmp_path):
    tree, warnings = load(skill(tmp_path, TRIGGER, extra="metadata:\n  version: 2\n  tags: [a, b]\n"))
    assert tree.root.summary == TRIGGER
    assert any("not valid YAML at line 3" in w and "read key by key" in w for w in warnings), warnings


def test_continuation_lines_of_a_colon_value_are_kept(tmp_path):
    tree, _ = load(skill(tmp_path, "Reads files: any kind.\n  Also writes: them back."))
    assert tree.root.summary == "Reads files: any kind. Also writes: them back."
