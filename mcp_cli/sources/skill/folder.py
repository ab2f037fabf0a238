"""The skill source: an Agent Skill folder (SKILL.md, scripts/, references/) becomes a command tree.

Default shape: root = the skill's name, summary = its description; one node per script, named after its file
stem as a tool is by its name (`text.command_name`; a group when the script has subcommands); a `docs` group of
doc topics. `mcp-cli.yaml` in the folder reshapes it (see `manifest`); the scripts' own help is then made to read
right (`helptext`).
Which files of the folder are read at all is decided in one place, `files`: nothing outside the folder, no
devices or pipes, bounded sizes; a build copies the same files.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import SourceError
from ...text import kebab
from ...tree import Group, Tree
from . import docs, helptext, manifest, scripts, skillmd
from . import files as files


def is_skill(path: Path) -> bool:
    return path.is_dir() and skillmd.find(path) is not None


def load(skill_dir: str | Path) -> tuple[Tree, list[str]]:
    """The tree of a skill folder and the warnings found on the way. Raises SourceError when it cannot be read."""
    skill_dir = Path(skill_dir).resolve()
    if not skill_dir.is_dir():
        raise SourceError(f"{skill_dir}: not a folder")
    meta, warnings = skillmd.read(skill_dir)
    listing = files.walk(skill_dir, warnings)
    options = manifest.read(skill_dir, warnings)
    name = str(options.get("name") or meta.name)
    tool_name = kebab(name)[:64]
    if tool_name != name:
        warnings.append(f"the tool is named {tool_name!r} ({name!r} is not a valid MCP tool name)")
    root = Group(name=tool_name, summary=str(options.get("summary") or meta.description))
    root.children = scripts.read_all(skill_dir, warnings, listing)
    docs_name = options.get("docs", "docs")
    topics = docs.topics(skill_dir, meta.body, warnings, listing)
    if docs_name and topics:
        docs_name = str(docs_name)
        if root.child(docs_name) is not None:
            warnings.append(f"a script is named {docs_name!r}; the documents are under {docs_name}-topics instead")
            docs_name += "-topics"
        root.children.append(docs.docs_group(docs_name, topics))
    manifest.apply(root, options.get("steps") or [], warnings)
    manifest.configure_scripts(root, options, warnings)
    if not root.children:
        warnings.append("no scripts or documents found: the tool has nothing to run")
    skill = {"file": meta.path.name, "frontmatter": meta.frontmatter}
    tree = Tree(root=root, skill=skill, base_dir=skill_dir)
    helptext.read_right(tree)  # after the manifest: usage lines name the commands where they end up
    return tree, warnings
