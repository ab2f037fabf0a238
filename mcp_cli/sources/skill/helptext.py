"""Scripts' own help made to read right in the tree: a summary said once, and the script's usage lines in the
tree's own form.

- **Said once.** A command's help shows its summary, then its description (or a pass-through script's help text).
  When the description opens with the summary in other words (`Add comments to DOCX documents` over `Add comments
  to DOCX documents.`, `Create thumbnail grids from slides` over `Create thumbnail grids from presentation
  slides.`: most of the summary's words in the first sentence), that sentence becomes the summary, so the help
  says it once (see `engine.help.lead`).
- **Usage as the agent calls it.** Scripts document themselves as scripts (`Usage: python scripts/pack.py <dir>
  <out>`, `python3 -m scripts.fill ...`, `Usage: %s FILE` with the program's name, `./make.sh NAME`); an agent calls
  the tree's command instead. Every invocation of one of the skill's scripts in a script's help becomes the path of
  that script's command (`pdf office pack <dir> <out>`): nothing is dropped, and what the help shows can be run as
  written. A bare file name (`pack.py <dir>`) and the program-name placeholders are rewritten only where they
  start an invocation: after `Usage:`, or at the start of a line under a `Usage:`/`Examples:` heading; there, a
  script file that is none of the skill's (`Usage: ./create-app.sh NAME` in `init-app.sh`) is the script itself
  under an older name. Such a heading starts a paragraph of its own, never the end of the summary's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from ...refs import SubprocessRef
from ...text import sentence
from ...tree import Command, Node, Tree

# What may run a script in its own usage text: an interpreter, `uv run`, `npx`.
_UV = r"uv\s+run\s+(?:--script\s+)?"
_RUNNER = rf"(?:(?:{_UV})?(?:python(?:3(?:\.\d+)?)?|py|node|bash|sh|zsh|deno\s+run|npx\s+tsx|tsx)\s+|{_UV})"
_PATH = r"(?:[\w.~${}@%-]*/)*"  # a folder prefix: `scripts/`, `$SKILL_DIR/scripts/`, `{baseDir}/scripts/`, `./`
# The program's own name in a usage text: `{sys.argv[0]}`, `%s`, `%(prog)s`, `$0`, `$(basename "$0")`, `${0##*/}`
_SELF = (
    r"""(?:\{(?:os\.path\.basename\()?sys\.argv\[0\]\)?\}|%\(prog\)s|%prog|%s|\{prog\}|\$\{?0(?:##\*/)?\}?"""
    r"""|\$\(basename\s+["']?\$\{?0\}?["']?\))"""
)
_EXTENSIONS = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs")
_HEADING = re.compile(r"(?i)^\s*(usage|examples?|synopsis)\s*:\s*(.*)$")
_INLINE_HEADING = re.compile(r"\s(?=(?i:usage|examples?|synopsis)\s*:)")
_WORD = re.compile(r"[a-z0-9]+")


def read_right(tree: Tree) -> None:
    """Make the help of every script command in `tree` read right (see the module's docstring), in place."""
    paths = _scripts(tree)  # script file (relative to the skill) -> its node's path in the tree
    if not paths:
        return
    scripts = {rel: " ".join([tree.root.name, *path]) for rel, path in paths.items()}
    of_path = {tuple(path): rel for rel, path in paths.items()}
    names = [re.escape(rel.rsplit("/", 1)[-1]) for rel in scripts]
    modules = [re.escape(rel.removesuffix(".py").replace("/", ".")) for rel in scripts if rel.endswith(".py")]
    module = rf"|-m\s+(?:{'|'.join(modules)})" if modules else ""
    invocation = re.compile(  # run by an interpreter, or as `./name.sh`: an invocation wherever it is
        rf"(?<![\w/.$-])(?:{_RUNNER}(?P<file>{_PATH}(?:{'|'.join(names)}){module})|(?P<dot>\./{_PATH}"
        rf"(?:{'|'.join(names)})))(?![\w.-])"
    )
    for path, node in tree.walk():
        run = _script_of(node) if isinstance(node, Command) else None
        rel = of_path.get(tuple(path)) or (run[0] if run else None)
        if rel is None:
            continue
        own = scripts.get(rel, " ".join([tree.root.name, *path]))
        rewrite = _Rewriter(invocation, scripts, own)
        for holder, attr in _texts(node):
            setattr(holder, attr, rewrite(getattr(holder, attr)))
        if isinstance(node, Command):
            said_once(node)


def said_once(cmd: Command) -> None:
    """Let a command's summary be its description's first sentence when that says the same in other words; a
    first paragraph that is only the summary, restated by the next one (an argparse description over a docstring
    epilog), is left out for the fuller one."""
    attr = "usage" if cmd.passthrough and cmd.usage else "description"
    text = getattr(cmd, attr).strip()
    summary = _INLINE_HEADING.split(" ".join(cmd.summary.split()), 1)[0].strip()  # not `... Usage: x.py FILE`
    head, _, rest = text.partition("\n\n")
    if " ".join(head.split()) == summary and _restates(_first_sentence(rest), summary):
        setattr(cmd, attr, rest.strip())
        text = rest.strip()
    first = _first_sentence(text)
    if _restates(first, summary):
        cmd.summary = first


def _restates(sentence: str, summary: str) -> bool:
    """Whether a sentence says what a summary says: most of the summary's words (stemmed) are in it."""
    words, said = _stems(summary), set(_stems(sentence))
    return bool(sentence and words) and len([w for w in words if w in said]) >= 0.8 * len(words)


def _first_sentence(text: str) -> str:
    """The first sentence of a text's first paragraph, up to a `Usage:` or `Examples:` line, on one line."""
    lines = list(
        itertools.takewhile(lambda line: not _HEADING.match(line), text.strip().split("\n\n", 1)[0].split("\n"))
    )
    return sentence(" ".join(" ".join(lines).split()))


def _stems(text: str) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())]


class _Rewriter:
    """Rewrites one node's help texts: invocations of the skill's scripts as their commands' paths."""

    def __init__(self, invocation: re.Pattern[str], scripts: dict[str, str], own: str) -> None:
        self.invocation, self.scripts, self.own = invocation, scripts, own

    def __call__(self, text: str) -> str:
        if not text:
            return text
        out: list[str] = []
        under = ""
        for line in text.split("\n"):
            heading = _HEADING.match(line)
            if heading:
                out += [""] if out and out[-1].strip() else []  # a paragraph of its own, not the summary's end
                under = heading.group(1).lower()
                line = line[: heading.start(2)] + self._start(heading.group(2), under)
            elif under and line[:1].isspace() and line.strip():
                indent = len(line) - len(line.lstrip())
                line = line[:indent] + self._start(line[indent:], under)
            elif line.strip():
                under = ""
            out.append(self.invocation.sub(self._path, line))
        return "\n".join(out)

    def _start(self, text: str, heading: str) -> str:
        """An invocation at the start of a line under `heading` (`usage`, `examples`): the program's name, or a
        script file; under `usage`, a script file that is none of the skill's is this one under an older name."""
        m = re.match(
            rf"(?:{_RUNNER})?(?:{_SELF}|(?P<file>{_PATH}[\w.-]+(?:{'|'.join(map(re.escape, _EXTENSIONS))})))(?=\s|$)",
            text,
        )
        if m is None:
            return text
        command = self._command(m.group("file")) if m.group("file") else self.own
        if command is None and heading in ("usage", "synopsis"):
            command = self.own
        return text if command is None else command + text[m.end() :]

    def _path(self, m: re.Match[str]) -> str:
        file = m.group("file") or m.group("dot")
        return self._command(file.split()[-1]) or m.group(0)

    def _command(self, file: str) -> str | None:
        """The command path of the script a file name or module names: the one whose path it ends with, else the
        only one with that name, else this node's own when it is one of them."""
        if "/" not in file and not file.endswith(_EXTENSIONS):  # a module: scripts.fill
            file = file.replace(".", "/") + ".py"
        name = file.rsplit("/", 1)[-1]
        found = [rel for rel in self.scripts if rel.rsplit("/", 1)[-1] == name]
        exact = [rel for rel in found if file.endswith(rel) or rel.endswith(file.lstrip("./"))]
        for choice in (exact, found):
            if len(choice) == 1:
                return self.scripts[choice[0]]
        return self.own if any(self.scripts[rel] == self.own for rel in found) else None


def _script_of(cmd: Command) -> tuple[str, int] | None:
    """The skill file a script command runs (relative to the skill) and how many subcommand words follow it."""
    argv = list(cmd.handler.command) if isinstance(cmd.handler, SubprocessRef) else []
    if "-m" in argv[:-1]:
        module = argv.index("-m") + 1
        return argv[module].replace(".", "/") + ".py", len(argv) - module - 1
    at = next((i for i, x in enumerate(argv) if x.startswith("{base}/")), None)
    return None if at is None else (argv[at].removeprefix("{base}/"), len(argv) - at - 1)


def _scripts(tree: Tree) -> dict[str, list[str]]:
    """Each script file of the skill with the path of its node (a group when it has subcommands)."""
    found: dict[str, list[str]] = {}
    for path, node in tree.walk():
        run = _script_of(node) if isinstance(node, Command) else None
        if run is not None and run[1] < len(path) and run[0] not in found:
            found[run[0]] = path[: len(path) - run[1]]
    return found


def _texts(node: Node) -> Iterator[tuple[object, str]]:
    """The help texts of a node (and, for a command, of its parameters), as (holder, attribute) pairs."""
    yield node, "summary"
    yield node, "description"
    if isinstance(node, Command):
        yield node, "usage"
        for p in node.params:
            yield p, "help"
