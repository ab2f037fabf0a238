"""What commands act on: entity types read from parameter names (a small general table, or a server's declaration),
and the entities a call's values hold (`repository acme/api`, `issue ENG-423`).

A command's `entities` maps a type to the parameters whose values, joined by `/`, make one entity of it:
`{"repository": ["owner", "repo"], "issue": ["issue_key"]}`. A value counts only when it looks like one: an issue
key like `ENG-423`, a path like `owner/name`, else one token of at most 100 characters.

A session's context holds the entities a session's calls named (a repository `acme/api`, an issue key `ENG-423`), most
recent first, each with the domains whose commands acted on it. Root help names them; search ranks those domains
first.

A session is the client of a stdio server (one a process), an HTTP client's MCP session (`Mcp-Session-Id`), or
the key a client gives in a request's `_meta` under `mcp-cli/context` (any string, such as a conversation id): how a
stateless HTTP client, or one of the 2026 protocol (which has no session), keeps one. It comes first when given.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .tree import Node, server_depth

if TYPE_CHECKING:
    from starlette.requests import Request

_TOKEN = r"[^\s/]{1,100}"
_PATH = r"[\w.-]{1,100}(?:/[\w.-]{1,100}){1,4}"
_KEY = r"[A-Z][A-Z0-9]{1,9}-\d{1,9}"

# type: the parameter names that hold one (lower case, without `_` and `-`), and the form its values take
TYPES: dict[str, tuple[frozenset[str], str]] = {
    "repository": (frozenset("repo repository fullname fullpath projectpath pathwithnamespace".split()), _PATH),
    "issue": (frozenset("issue issuekey issueid ticket ticketkey ticketid".split()), _KEY),
    "project": (frozenset("project projectkey projectid projectname".split()), _TOKEN),
    "namespace": (frozenset("namespace ns".split()), _TOKEN),
    "channel": (frozenset("channel channelid channelname".split()), _TOKEN),
    "organization": (frozenset("org orgid orgname organization organizationid".split()), _TOKEN),
    "workspace": (frozenset("workspace workspaceid workspacename".split()), _TOKEN),
    "team": (frozenset("team teamid teamkey".split()), _TOKEN),
    "incident": (frozenset("incident incidentid".split()), _TOKEN),
    "space": (frozenset("space spacekey spaceid".split()), _TOKEN),
    "cluster": (frozenset("cluster clusterid clustername".split()), _TOKEN),
    "bucket": (frozenset("bucket bucketname".split()), _TOKEN),
    "container": (frozenset("container containerid containername".split()), _TOKEN),
    "dashboard": (frozenset("dashboard dashboardid dashboarduid".split()), _TOKEN),
    "page": (frozenset("page pageid".split()), _TOKEN),
}
OWNER, OWNED = "owner", frozenset("repo repository name".split())  # `owner` + `repo` (or `name`): a repository


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def infer(names: list[str], declared: dict[str, str] | None = None) -> dict[str, list[str]]:
    """The entity types a command with these parameter names acts on; `declared` (parameter name -> type, from a
    server's config) adds what the table cannot see and overrides it for the names it gives."""
    declared = declared or {}
    out: dict[str, list[str]] = {}
    keys = {_key(n): n for n in names if n not in declared}
    owned = next((k for k in keys if k in OWNED), None)
    if OWNER in keys and owned:
        out["repository"] = [keys.pop(OWNER), keys.pop(owned)]
    for key, name in keys.items():
        kind = next((t for t, (known, _) in TYPES.items() if key in known), None)
        if kind and kind not in out:
            out[kind] = [name]
    for name, kind in declared.items():
        if name in names:
            out.setdefault(kind, []).append(name)
    return out


def found(acts_on: dict[str, list[str]], values: Mapping[str, object]) -> list[tuple[str, str]]:
    """(type, value) of each entity `values` hold, for a command that acts on `acts_on`."""
    out = []
    for kind, names in acts_on.items():
        parts = [values.get(n) for n in names]
        if not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in parts):
            continue
        value = "/".join(str(p) for p in parts)
        form = TYPES[kind][1] if kind in TYPES and len(names) == 1 else _PATH if len(names) > 1 else _TOKEN
        if re.fullmatch(form, value):
            out.append((kind, value))
    return out


# A session's context

META_KEY = "mcp-cli/context"
KEPT = 8  # entities a session remembers
KEYED = 1_000  # HTTP sessions' and client-given contexts a process remembers


@dataclass
class Entity:
    """A thing the session works on: its type (`issue`), its value (`ENG-423`), the domains that acted on it."""

    type: str
    value: str
    domains: list[str] = field(default_factory=list)  # most recent first


class Context:
    """One session's recent entities, most recent first, at most KEPT; its `key`, a secret naming the session to
    what is kept for it (answers' next parts), None for a request on its own (which anyone with an id may read); a
    `key` given is what every replica of a server derives from the session's own key, so that a shared store of
    answers serves the session on any of them."""

    def __init__(self, lasting: bool = True, key: str | None = None) -> None:
        self.entities: list[Entity] = []
        self.key = key or (secrets.token_urlsafe(16) if lasting else None)

    def record(self, domain: str, found: list[tuple[str, str]]) -> None:
        """Entities named in a call to a command of `domain`: each moves to the front, `domain` first among its."""
        for kind, value in found:
            old = next((e for e in self.entities if (e.type, e.value) == (kind, value)), None)
            entity = old or Entity(kind, value)
            if old:
                self.entities.remove(old)
            entity.domains = [domain] + [d for d in entity.domains if d != domain]
            self.entities.insert(0, entity)
        del self.entities[KEPT:]

    def domains(self) -> list[str]:
        """The domains acting on the entities in context, most recent first."""
        return list(dict.fromkeys(d for e in self.entities for d in e.domains))


def domain(walked: list[Node]) -> str:
    """The path of the domain a call acts in (`walked`: root to command): the group of the command's server, under a
    group of servers too (`issues jira`), else the first group on the way."""
    depth = server_depth(walked) or 1
    return " ".join(n.name for n in walked[1 : depth + 1])


def acts_in(path: str, domains: Sequence[str]) -> bool:
    """Whether a command path lies in one of `domains` (paths of groups)."""
    return any(path == d or path.startswith(d + " ") for d in domains)


class Contexts:
    """Each session's Context: the stdio client's, and others by key (the least recently used forgotten first)."""

    def __init__(self) -> None:
        self._stdio = Context()
        self._keyed: OrderedDict[bytes, Context] = OrderedDict()

    def of(self, request: Request | None, meta: object) -> Context:
        """The context of a request with this `_meta`: over HTTP, `request` (the SDK's request context's); None for
        the stdio client. A stateless HTTP request without a key gets a context of its own, which ends with it."""
        given = meta.get(META_KEY) if isinstance(meta, dict) else None
        if isinstance(given, str) and given:
            key = "given\0" + given
        elif request is None:
            return self._stdio
        elif request.headers.get("mcp-session-id"):
            key = "session\0" + request.headers["mcp-session-id"]
        else:
            return Context(lasting=False)
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()  # a long key costs no memory
        context = self._keyed.pop(digest, None) or Context(key=digest.hex())
        self._keyed[digest] = context
        if len(self._keyed) > KEYED:
            self._keyed.popitem(last=False)
        return context
