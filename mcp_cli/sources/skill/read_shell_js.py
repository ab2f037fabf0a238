"""Shell and JavaScript files of a skill as commands, read from their text: they pass their argv through.

Not commands: a file with no code (empty, or comments only); a file whose header says it is not meant to be run
directly; a shell file whose top level only defines functions and variables, without a shebang or with a header that
says to source it (it is meant to be `source`d); JavaScript that uses `document`/`window` and nothing of Node (it
runs in a browser); a JavaScript module that only exports (a library: it never reads `process.argv`).
Help comes from the header comments (see `usage`); a script that reads its standard input (`read`, `cat -`,
`/dev/stdin`, `process.stdin`) says so.
"""

from __future__ import annotations

import re
from typing import Any

from ...refs import SubprocessRef
from ...tree import Command
from . import usage

_FUNCTION = re.compile(r"^\s*(?:function\s+[\w:.-]+\s*(?:\(\))?|[\w:.-]+\s*\(\))\s*(\{.*)?$")
_DEFINITION = re.compile(
    r"^\s*((export|readonly|declare|typeset|local)\s|[A-Za-z_]\w*(\[[^]]*\])?\+?=|alias\s|"
    r"set\s|shopt\s|source\s|\.\s|return\b|:\s|\{\s*$|\}\s*$|.*(&&|\|\|)\s*return\b)"
)
_SAYS_SOURCE = re.compile(r"\bsource\s+(?:this|it|me)\b|\b(?:be|is|are|get)\s+sourced\b", re.IGNORECASE)
_SHELL_STDIN = re.compile(
    r"(?m)(?:^|[;&|(!{]|\b(?:do|then|while|until|if|else))[ \t]*(?:IFS=\S*\s+)?(?:read|mapfile|readarray)\s+(?!.*<)"
    r"|\bcat\s+(?:-\s*(?:$|[|;)&])|<&0)|\$\(\s*cat\s*\)|/dev/stdin|<&0"
)
_NODE = re.compile(r"\bprocess\s*\.|\brequire\s*\(|__dirname|__filename|\bfrom\s+['\"]node:|\bimport\s*\(\s*['\"]node:")
_BROWSER = re.compile(r"\b(document|window)\s*\.")
_JS_EXPORTS = re.compile(r"(?m)\bmodule\.exports\b|\bexports\.\w+\s*=|^export\s")
_JS_ENTRY = re.compile(r"\bprocess\.argv\b|\brequire\.main\b|\bimport\.meta\.main\b|\bprocess\.stdin\b")
_JS_COMMENTS = re.compile(r"/\*.*?\*/|^[ \t]*//[^\n]*", re.S | re.M)
_JS_STDIN = re.compile(r"\bprocess\.stdin\b|/dev/stdin|\bread(?:File)?Sync\(\s*0\s*[,)]")


def _sourced(source: str) -> bool:
    """A shell file meant to be `source`d: nothing at its top level but definitions, and no shebang unless its
    header says to source it."""
    if source.startswith("#!") and not _SAYS_SOURCE.search(usage.comments(source, "#")):
        return False
    depth = 0
    for line in source.splitlines():
        code = line.split(" #", 1)[0].strip()
        if not code or code.startswith("#"):
            continue
        if depth == 0 and not _FUNCTION.match(code) and not _DEFINITION.match(code):
            return False
        depth = max(depth + code.count("{") - code.count("}"), 0)
    return True


def _command(
    runner: str, help_text: str, reads_stdin: bool, rel: str, warnings: list[str]
) -> tuple[Command | None, dict[str, Any]]:
    """The command a script's help text makes, run by `runner`, unless that text says not to run it (a warning
    naming the file)."""
    if usage.NOT_RUN.search(help_text):
        warnings.append(f"{rel}: says it is not meant to be run directly; not a command")
        return None, {}
    summary = usage.summary(help_text)
    handler = SubprocessRef(command=[runner, "{base}/" + rel])
    return Command(name="", summary=summary, passthrough=True, usage=help_text, handler=handler), {"stdin": reads_stdin}


def read_shell(source: str, rel: str, warnings: list[str]) -> tuple[Command | None, dict[str, Any]]:
    """A shell file's command (None: not one; a hidden file is a warning naming it) and whether it reads stdin."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    if not code.strip():  # empty, or comments only: nothing to run
        return None, {}
    if _sourced(source):
        warnings.append(f"{rel}: defines functions for other scripts to `source`; not a command")
        return None, {}
    return _command("bash", usage.shell_usage(source), bool(_SHELL_STDIN.search(code)), rel, warnings)


def read_js(source: str, rel: str, warnings: list[str]) -> tuple[Command | None, dict[str, Any]]:
    """A JavaScript file's command (None: not one; a hidden file is a warning naming it) and whether it reads stdin."""
    code = _JS_COMMENTS.sub("", re.sub(r"^#!.*", "", source))
    if not code.strip():  # empty, or comments only: nothing to run
        return None, {}
    if _BROWSER.search(code) and not _NODE.search(code):
        warnings.append(f"{rel}: uses `document`/`window` and nothing of Node, so it runs in a browser; not a command")
        return None, {}
    if _JS_EXPORTS.search(code) and not _JS_ENTRY.search(code):
        return None, {}
    return _command("node", usage.js_usage(source), bool(_JS_STDIN.search(code)), rel, warnings)
