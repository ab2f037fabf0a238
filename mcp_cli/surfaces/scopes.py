"""Per-client scopes (`serve --http ... --scopes FILE`): which part of the tree each bearer token sees.

The file is TOML, one `[[scope]]` table per client or tenant group::

    [[scope]]
    name = "team-a"                  # optional: how messages name it
    token_env = "TEAM_A_TOKEN"       # the token, from this environment variable; or instead
    # token_sha256 = "9f86d08..."    # the token's SHA-256 (hex): the file holds no secret
    paths = ["github *", "jira issues *"]
    read_only = true                 # optional: only commands whose tool hints say read-only

A pattern is a glob (`fnmatch`, case-sensitive) over a path of names joined by spaces, without the root's; `*` matches
any characters, spaces too (`github *` is all of github, `* list` every command named list), and a pattern that
matches a group covers all of it. A request's scope sees its part of the tree (`prune`) through a Runtime over that
part, which shares the serving runtime's upstream servers and processes: a path outside it is not in its tree, so it
answers exactly as an unknown one, in help, search, describe and calls alike.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..engine.kept import Store
from ..engine.runtime import Runtime
from ..errors import Unsafe, close_to
from ..handlers.processes import withhold
from ..text import named
from ..tree import Command, Group, Node, Tree, server_depth

ACCESS = "mcp_cli.access"  # where BearerAuth puts, in a request's ASGI scope, what its token admits (a scope's view)
log = logging.getLogger("mcp_cli")
KEYS = ("name", "token_env", "token_sha256", "paths", "read_only")
_HEX = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class Scope:
    """One client's (or tenant group's) access: its token's SHA-256, the path patterns it sees, whether read-only."""

    name: str
    digest: bytes
    paths: tuple[str, ...]
    read_only: bool = False


def load(file: str | Path, environ: Mapping[str, str] = os.environ) -> list[Scope]:
    """The scopes of a file; Unsafe with a one-line message naming the file, the scope and what to change."""
    from ..compat import toml_loads

    where = f"--scopes {file}"
    try:
        data = toml_loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise Unsafe(f"{where}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:  # not TOML, or not UTF-8
        raise Unsafe(f"{where}: not a TOML file ({exc})") from None
    extra = sorted(set(data) - {"scope"})
    if extra:
        raise Unsafe(f"{where}: unknown key {extra[0]!r}; the file holds [[scope]] tables only")
    tables = data.get("scope")
    if not isinstance(tables, list) or not tables:
        raise Unsafe(f'{where}: no [[scope]] tables; give each client one with token_env = "NAME" and paths = [...]')
    scopes = [_scope(f"{where}: scope {i}", f"scope {i}", table, environ) for i, table in enumerate(tables, 1)]
    seen: dict[bytes, str] = {}
    for scope in scopes:
        if scope.digest in seen:
            raise Unsafe(
                f"{where}: scopes {seen[scope.digest]!r} and {scope.name!r} have the same token; give each its own"
            )
        seen[scope.digest] = scope.name
    return scopes


def _scope(where: str, name: str, table: object, environ: Mapping[str, str]) -> Scope:
    """One [[scope]] table; `where` names it in messages, `name` is its name when it gives none."""
    if not isinstance(table, dict):
        raise Unsafe(f"{where}: must be a table ([[scope]]) of token_env or token_sha256, paths and read_only")
    name = table.get("name", name)
    if "name" in table:
        if not isinstance(name, str) or not name.strip():
            raise Unsafe(f"{where}: `name` must be a non-empty string")
        where = f"{where} ({name})"
    for key in table:
        if key not in KEYS:
            near = close_to(key, KEYS)
            hint = f"did you mean {near[0]!r}?" if near else f"the keys are {', '.join(KEYS)}"
            raise Unsafe(f"{where}: unknown key {key!r}; {hint}")
    if ("token_env" in table) == ("token_sha256" in table):
        raise Unsafe(f'{where}: give the token as exactly one of token_env = "NAME" or token_sha256 = "<hex>"')
    if "token_env" in table:
        variable = table["token_env"]
        token = environ.get(variable, "").strip() if isinstance(variable, str) else ""
        if token:
            withhold(variable)  # a scope's token: no child the server starts may read it
        if not token:
            raise Unsafe(f"{where}: token_env {variable!r}: the environment variable is not set (or empty)")
        digest = hashlib.sha256(token.encode()).digest()
    else:
        hexdigest = table["token_sha256"]
        if not isinstance(hexdigest, str) or not _HEX.fullmatch(hexdigest):
            raise Unsafe(
                f"{where}: token_sha256 must be 64 hex digits, the SHA-256 of the token "
                '(printf %s "$TOKEN" | sha256sum)'
            )
        digest = bytes.fromhex(hexdigest)
    paths = table.get("paths")
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p.strip() for p in paths):
        raise Unsafe(f'{where}: `paths` must be a non-empty list of patterns, e.g. paths = ["github *"]')
    read_only = table.get("read_only", False)
    if not isinstance(read_only, bool):
        raise Unsafe(f"{where}: `read_only` must be true or false")
    return Scope(name, digest, tuple(" ".join(p.split()) for p in paths), read_only)


def prune(tree: Tree, paths: Sequence[str], read_only: bool = False) -> Tree:
    """The part of `tree` that `paths` cover (with `read_only`, of commands only those whose hints say read-only),
    and the root's `search` command, which then searches that part. Groups left empty are dropped, except those empty to
    begin with (a server not available yet) under a pattern that would cover what comes into them. A group that
    lost some of what it held is summarised by the names it keeps (its own summary may name the rest); the root
    then has no summary."""

    def covers(names: list[str]) -> bool:
        return any(fnmatchcase(" ".join(names[:i]), p) for i in range(1, len(names) + 1) for p in paths)

    def shown(node: Node, names: list[str], walked: list[Node]) -> bool:
        if isinstance(node, Command):
            if not node.handler.listed and len(names) == 1:  # the root's search: it searches the part kept
                return True
            depth = server_depth([*walked, node])
            server = node.handler.server
            keyed = [server, *names[depth:]] if depth and server else names  # as the config names the server
            return (covers(names) or covers(keyed)) and (not read_only or node.annotations.get("readOnlyHint") is True)
        if isinstance(node, Group):  # an empty one: "\0" stands for any name that may come into it
            return covers(names) or any(fnmatchcase(" ".join([*names, "\0"]), p) for p in paths)
        return covers(names)

    def part(group: Group, prefix: list[str], walked: list[Node]) -> Group:
        kept: list[Node] = []
        for node in group.children:
            names = [*prefix, node.name]
            if isinstance(node, Group) and node.children:
                inner = part(node, names, [*walked, node])
                if inner.children:
                    kept.append(inner)
            elif shown(node, names, walked):
                kept.append(node)
        if len(kept) == len(group.children) and all(a is b for a, b in zip(kept, group.children, strict=True)):
            return group
        summary = f"{named([n.name for n in kept], 6)}." if prefix else ""
        return dataclasses.replace(group, children=kept, summary=summary, description="")

    return dataclasses.replace(tree, root=part(tree.root, [], [tree.root]), rediscover=None)


class View:
    """What one scope sees of a serving runtime: a Runtime over its part of the tree, made again when the serving
    runtime's tree is replaced (servers that come back: `Runtime.adopt`)."""

    def __init__(self, scope: Scope, serving: Runtime) -> None:
        self.scope, self.serving = scope, serving
        self._made: tuple[Tree, Runtime] | None = None  # the serving tree it was made from, and the runtime
        self._kept: Store | None = None  # its answers' next parts, apart from other scopes'

    @property
    def runtime(self) -> Runtime:
        tree = self.serving.tree
        if self._made is None or self._made[0] is not tree:
            part = prune(tree, self.scope.paths, self.scope.read_only)
            self._made = (tree, Runtime(part, self.serving.kinds))
            self._kept = self._kept or self.serving.kept.part(self.scope.digest.hex())
            self._made[1].kept = self._kept  # kept when the tree changes
        return self._made[1]


def views(scopes: Sequence[Scope], serving: Runtime) -> dict[bytes, View]:
    """A View per scope, by its token's digest (what `http_guard.BearerAuth` admits); a warning for each pattern
    that matches no path of the tree (yet)."""
    tree, name = serving.tree, serving.tree.name
    nothing = len(prune(tree, []).walk())  # what every scope sees: `search`
    for scope in scopes:
        for pattern in scope.paths:
            if len(prune(tree, [pattern]).walk()) == nothing:
                hint = f" (patterns leave out the tool's name, {name})" if pattern.split()[0] == name else ""
                log.warning("scope %r: %r matches no path of %s (yet)%s", scope.name, pattern, name, hint)
    return {scope.digest: View(scope, serving) for scope in scopes}


def runtime_for(request: Mapping[str, Any] | None, runtime: Runtime) -> Runtime:
    """The runtime a request may use: when it came through `BearerAuth` with scopes (`request` is its ASGI scope),
    its scope's part of `runtime`; else `runtime` itself (stdio, or HTTP without scopes)."""
    view = (request or {}).get(ACCESS)
    return runtime if view is None else view.runtime
