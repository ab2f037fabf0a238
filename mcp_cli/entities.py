"""What commands act on: entity types read from parameter names (a small general table, or a server's declaration),
and the entities a call's values hold (`repository acme/api`, `issue ENG-423`).

A command's `entities` maps a type to the parameters whose values, joined by `/`, make one entity of it:
`{"repository": ["owner", "repo"], "issue": ["issue_key"]}`. A value counts only when it looks like one: an issue
key like `ENG-423`, a path like `owner/name`, else one token of at most 100 characters.
"""

from __future__ import annotations

import re
from typing import Any

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


def found(acts_on: dict[str, list[str]], values: dict[str, Any]) -> list[tuple[str, str]]:
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
