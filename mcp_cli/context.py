"""Per-session context: the entities a session's calls named (a repository `acme/api`, an issue key `ENG-423`), most
recent first, each with the domains whose commands acted on it. Root help names them; search ranks those domains
first.

A session is the MCP session (stdio, stateful HTTP), or the key a client gives in a request's `_meta` under
`mcp-cli/context` (any string, such as a conversation id), which is how a stateless HTTP client keeps one.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

META_KEY = "mcp-cli/context"
KEPT = 8  # entities a session remembers
GIVEN = 1_000  # client-given contexts a process remembers (the least recently used go first)


@dataclass
class Entity:
    type: str
    value: str
    domains: list[str] = field(default_factory=list)  # most recent first


class Context:
    """One session's recent entities, most recent first, at most KEPT."""

    def __init__(self) -> None:
        self.entities: list[Entity] = []

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


class Contexts:
    """Each session's Context: kept per session object while it lives, or per client-given key."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary[Any, Context] = weakref.WeakKeyDictionary()
        self._given: OrderedDict[bytes, Context] = OrderedDict()

    def of(self, ctx: Any, meta: Any) -> Context:
        """The context of a request: the one its `_meta` names, else its session's."""
        key = meta.get(META_KEY) if isinstance(meta, dict) else None
        if not isinstance(key, str) or not key:
            return self._sessions.setdefault(ctx.session, Context())
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()  # a long key costs no memory
        context = self._given.pop(digest, None) or Context()
        self._given[digest] = context
        if len(self._given) > GIVEN:
            self._given.popitem(last=False)
        return context
