"""Split a long list of tool names into subgroups named after the things they act on.

`list_issues`, `create_issue`, `get_issue` -> `issues` with `list`, `create`, `get`. Names are split into words
(snake, kebab, camel case); verbs are set aside; the noun (or two-word noun) shared by the most tools becomes
a group, greedily, until no noun is shared by two tools. Tools that share nothing stay where they were. A noun is
named plural when a name has it plural, or lists, creates, deletes, adds or removes it (`list_event` -> events).
"""

from __future__ import annotations

from collections import Counter

from ..search.lexicon import NAME_VERBS
from ..text import words

COUNTED = set("list create delete add remove".split())  # verbs of things one can count: their names are plural
_FILLER = set("by for of to from in on with and the a an all my".split())


def singular(word: str) -> str:
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + repl
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def shared_prefix(names: list[str]) -> str:
    """The kebab-case first word every name shares (`git-` of git_status, git_log), or '' (also for one name)."""
    firsts = {tuple(words(n)[:1]) for n in names}
    if len(names) < 2 or len(firsts) != 1 or any(len(words(n)) < 2 for n in names):
        return ""
    return next(iter(firsts))[0] + "-"


def agent_verb(word: str) -> str:
    """The verb an agent noun is made of (`getter` -> get, `searcher` -> search, `merger` -> merge, `editor` ->
    edit), or ''."""
    if not word.endswith(("er", "or")):
        return ""
    stem = word[:-2]
    doubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else ""
    return next((v for v in (stem, doubled, word[:-1], stem + "e") if v in NAME_VERBS), "")


def _verb_at(ws: list[str]) -> int:
    """Where a name's verb is: its first word if that is one (`list_pull_requests`), else its last (`issues_list`,
    or an agent noun after a noun: `trial_getter`), else -1."""
    if ws and ws[0] in NAME_VERBS:
        return 0
    return len(ws) - 1 if ws and (ws[-1] in NAME_VERBS or len(ws) > 1 and agent_verb(ws[-1])) else -1


def _stems(ws: list[str]) -> list[str]:
    """Singular noun stems of a name's words, '' for the verb (`_verb_at`) and for digits and letters; other words
    are nouns."""
    verb = _verb_at(ws)
    return [
        singular(w) if i != verb and w not in _FILLER and len(w) > 1 and not w.isdigit() else ""
        for i, w in enumerate(ws)
    ]


def _nouns(ws: list[str]) -> set[str]:
    """Singular nouns and two-word nouns (`pull-request`) among a name's words."""
    stems = _stems(ws)
    found = {s for s in stems if s}
    found |= {f"{a}-{b}" for a, b in zip(stems, stems[1:], strict=False) if a and b}
    return found


Groups = dict[str, list[tuple[str, str]]]


def plural(word: str) -> str:
    """`event` -> events, `policy` -> policies, `dns-record` -> dns-records; a word ending in `s` or a digit stays."""
    if word.endswith("s") or word[-1:].isdigit():
        return word
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("x", "z", "ch", "sh")) else "s")


def _form(forms: Counter[str], counted: bool) -> str:
    """How names spell a noun: their commonest plural form, else their commonest form, made plural if it is `counted`
    (a name lists, creates, deletes, adds or removes it)."""
    plural_forms = [f for f in forms if f.endswith("s")]
    if plural_forms:
        return max(plural_forms, key=forms.__getitem__)
    common = forms.most_common(1)[0][0]
    return plural(common) if counted else common


def _counted(ws: list[str]) -> int:
    """Where the noun a name's verb counts ends (its last noun: `list_weather_alerts` counts alerts), or -1."""
    verb = _verb_at(ws)
    nouns = [i for i, stem in enumerate(_stems(ws)) if stem]
    return nouns[-1] if verb >= 0 and ws[verb] in COUNTED and nouns else -1


def _spelled(noun: str, names: list[list[str]]) -> str:
    """How tool names spell a (singular, maybe two-word) noun, plural if any name has it plural or counts it:
    `issue` in list_issues/get_issue -> issues; `event` in list_event -> events; `code` in search_code -> code."""
    parts = noun.split("-")
    forms: Counter[str] = Counter()
    counted = False
    for ws in names:
        for i in range(len(ws) - len(parts) + 1):
            window = ws[i : i + len(parts)]
            if [singular(w) for w in window] == parts:
                forms["-".join(window)] += 1
                counted = counted or _counted(ws) == i + len(parts) - 1
    return _form(forms, counted) if forms else noun


def profile(names: list[str]) -> tuple[Counter[str], dict[str, str]]:
    """What a set of tools acts on: ({singular noun: how many times the names name it}, {noun: its spelling}). A
    two-word noun counts when two names share it; a word that only ever appears inside one is told as that noun."""
    counts: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    counted: set[str] = set()
    split_words = nouns_of(names)
    for name in names:
        ws = split_words[name]
        stems, head = _stems(ws), _counted(ws)
        for i, stem in enumerate(stems):
            if not stem:
                continue
            found = [(stem, ws[i], i)]
            if i + 1 < len(stems) and stems[i + 1]:
                found.append((f"{stem}-{stems[i + 1]}", f"{ws[i]}-{ws[i + 1]}", i + 1))
            for noun, spelling, end in found:
                counts[noun] += 1
                surface.setdefault(noun, Counter())[spelling] += 1
                if end == head:
                    counted.add(noun)
    pairs = [p for p in counts if "-" in p]
    for pair in pairs:
        for part in pair.split("-"):
            if counts[part] == counts[pair]:
                del counts[part]
    for pair in pairs:
        if counts[pair] < 2 or any(counts.get(part, 0) > counts[pair] for part in pair.split("-")):
            del counts[pair]
    return counts, {noun: _form(surface[noun], noun in counted) for noun in counts}


def topics(names: list[str], k: int = 4) -> list[str]:
    """The things a set of tools acts on, most common first, as the names spell them: `issues, pull-requests`."""
    counts, spelled = profile(names)
    return [spelled[noun] for noun, _ in counts.most_common(k)]


def _heads(ws: list[str]) -> set[str]:
    """The noun a name acts on (and the two-word noun ending in it): its last noun before a filler word, or its last
    noun (`release` of get_release_by_tag and of get_latest_release)."""
    stems = _stems(ws)
    end = next((i for i, w in enumerate(ws) if w in _FILLER and i > 0), len(ws))
    at = max((i for i in range(end) if stems[i]), default=-1)
    if at < 0:
        return set()
    return {stems[at]} | ({f"{stems[at - 1]}-{stems[at]}"} if at > 0 and stems[at - 1] else set())


def cover(
    nouns: dict[str, set[str]], left: list[str], heads: dict[str, set[str]]
) -> tuple[dict[str, list[str]], list[str]]:
    """Greedily, the noun shared by the most items (two at least, not all) takes them, until no noun is shared:
    ({noun: [items]}, items left), in the order of `left`. Between nouns shared alike, the one more of them act on
    (`heads`: release for list_releases, get_latest_release, get_release_by_tag, before tag), then a two-word one,
    then the last in alphabetical order."""
    groups: dict[str, list[str]] = {}
    while True:
        counts = Counter(noun for n in left for noun in nouns[n])
        acted = Counter(noun for n in left for noun in heads[n])
        best = max(
            (c for c in counts.items() if 2 <= c[1] < len(nouns)),
            key=lambda c: (c[1], acted[c[0]], "-" in c[0], c[0]),
            default=None,
        )
        if best is None:
            return groups, left
        groups[best[0]] = [n for n in left if best[0] in nouns[n]]
        left = [n for n in left if best[0] not in nouns[n]]


def nouns_of(names: list[str]) -> dict[str, list[str]]:
    """Each name's words, without a first word that only says whose the tool is: one every name shares (often the
    server's name), or one found nowhere else that starts two names or more before their verb, one of them another
    name's copy (`github_create_issue` beside `create_issue`: not `actions` of actions_list, actions_get)."""
    split_words = {n: words(n) for n in names}
    if shared_prefix(names):
        return {n: ws[1:] for n, ws in split_words.items()}
    later = {w for ws in split_words.values() for w in ws[1:]}
    plain = {tuple(ws) for ws in split_words.values()}
    starts = Counter(ws[0] for ws in split_words.values() if _owned(ws))
    copies = {ws[0] for ws in split_words.values() if _owned(ws) and tuple(ws[1:]) in plain}
    owners = {w for w, times in starts.items() if times > 1 and w in copies and w not in later}
    return {n: ws[1:] if _owned(ws) and ws[0] in owners else ws for n, ws in split_words.items()}


def _owned(ws: list[str]) -> bool:
    """Whether a name's words may start with whose it is: a word that is no verb, then a verb (`github_create`)."""
    return len(ws) > 1 and ws[0] not in NAME_VERBS and ws[1] in NAME_VERBS


def split(names: list[str], preset: dict[str, list[str]] | None = None) -> tuple[Groups, list[str]]:
    """({group: [(tool, command name)]}, tools left ungrouped). `preset` groups come first, as given."""
    groups: dict[str, list[tuple[str, str]]] = {g: [(t, "") for t in ts] for g, ts in (preset or {}).items()}
    taken = {t for ts in (preset or {}).values() for t in ts}
    split_words = nouns_of(names)
    found, left = cover(
        {n: _nouns(ws) for n, ws in split_words.items()},
        [n for n in names if n not in taken],
        {n: _heads(ws) for n, ws in split_words.items()},
    )
    for noun, tools in found.items():
        groups.setdefault(_spelled(noun, [split_words[n] for n in tools]), []).extend((n, "") for n in tools)
    for group, members in groups.items():
        group_words = set(group.split("-")) | {singular(w) for w in group.split("-")}
        shorts: dict[str, str] = {}
        for tool in sorted((t for t, _ in members), key=lambda t: len(words(t))):  # a copy `github_...` comes last
            own = split_words.get(tool) or words(tool)
            rest = [w for w in own if w not in group_words and singular(w) not in group_words]
            short = "-".join(rest) or "-".join(words(tool))
            shorts[tool] = "-".join(words(tool)) if short in shorts.values() else short
        groups[group] = [(tool, shorts[tool]) for tool, _ in members]
    return groups, left
