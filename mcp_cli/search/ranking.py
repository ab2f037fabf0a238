"""`search WORDS...`: rank a tree's commands by BM25 over their path, summary, description and parameter names.

Text becomes terms: names split (snake, kebab, camel case), words lower-cased and stemmed (Snowball English),
runs of Chinese, Japanese or Korean script cut into overlapping character pairs, stop words left out. A query's
leading verb stands for its operations ("file a bug" asks to create), as does the verb in a command's name; other
words also match their everyday synonyms, at a lower weight. The vocabulary is in `lexicon.py`. The commands of
domains acting on the entities in a session's context score CONTEXT_BOOST times as much (a boost, not a filter).
With a local embedding model configured (`embeddings.py`), the final score mixes BM25's with the model's cosine.
"""

from __future__ import annotations

import heapq
import logging
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as default
from functools import cache, partial
from typing import TYPE_CHECKING, Protocol

from ..entities import acts_in
from ..text import command_name, words
from ..tree import Command, Group, Tree
from . import embeddings, lexicon
from .lexicon import NAME_VERBS
from .spelling import Vocabulary

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger("mcp_cli")

K1, B = 1.2, 0.75
FIELD_WEIGHTS = (("path", 3), ("summary", 2), ("params", 1), ("description", 1))
SYNONYM_WEIGHT = 0.8
OPERATION_WEIGHT = 2.0  # a query's operation, which decides between commands that act on the same things
CONTENT_WEIGHT = 0.5  # words of what to write ("a bug *about the login page*")
LEAD_GROUP_WEIGHT = 0.3  # a query's verb that also names a group ("*file* a bug" and `files`) as a word of its own
EXACT_WEIGHT = 0.5  # a word as written, where a command's name has it so ("issues" meets list-issues first)
SHOWN = 5  # results at most, unless a number is asked for
STRONG = 0.5  # unless a number is asked for, a result scoring under this share of the best one is left out
WEAK = 0.3  # a top result fitting a query less than this (`Index.fits`) means no command fits (bench/nofit.py)
UNHEARD_COST = 0.25  # what each word of a thing the tree has never heard of (`balance`) takes from it ...
UNHEARD_MOST = 2  # ... for this many such words at most
BODY_WEIGHT = 0.5  # what a word only a command's description or parameters have counts for in its fit (of its rarity)
# With an embedding model, the fit is calibrated anew (a logistic fit on the tune half of bench/data/fresh and the
# odd-numbered no-fit requests, rounded; bench/fresh.py): how much its best cosine stands out from the RUNNER_UP-th
# best adds GAP_WEIGHT times that lead, a query's operation that a command with operations of its own lacks ("delete
# the customer" meeting create-customer) takes OP_COST, and under WEAK_MODEL no command fits.
GAP_WEIGHT = 4.0
RUNNER_UP = 6
CLOSEST = 100  # commands the model's cosine alone brings into the ranking, at most (of 10,000: a search stays fast)
# With an embedding model, the last place of a ranking goes to the command the model finds closest that the words
# left out (1 of SHOWN, in proportion to a ranking's length): what a request means in other words ("switch off the
# lamps in the kitchen" for toggle-light), which no word of a command's has (bench/fresh.py, the sets spent so far:
# Recall@5 .827 -> .860, paraphrases .485 -> .578), unless the words' best fits it at least WORDS_SURE (twice the fit
# under which no command fits): then the words found what it asks, and their next ones are kept (an agent's keywords,
# "word document create heading paragraph", want its words' fourth and fifth). Two places of five found more (R@5
# .863, paraphrases .587) but took Boundary's "check the status of the latest deployment" out of its five (R@5 .969,
# under its .97), as an answer of five shows it (bench/quality.py's rank_of)
MODEL_PLACES = 1 / 5
WORDS_SURE = 0.9
OP_COST = 1.0
WEAK_MODEL = 0.45
FEW = 100  # commands: how rare a word is, in a smaller tree, is told as in one of this many
CONTEXT_BOOST = 1.5  # a command of a domain acting on an entity in the session's context (`entities.py`)
# scripts written without spaces between words (Hangul, kana, CJK ideographs); compiled when used
_LETTERS = re.compile(r"[^\W_]+")  # a run of letters and digits, in any script
_CJK = r"([\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)"


@cache
def _phrases() -> list[tuple[re.Pattern[str], str]]:
    """Each multi-word phrase of the lexicon (compiled by the first search, not at start-up) and what it reads as."""
    return [(re.compile(rf"\b{re.escape(k)}\b"), " ".join(v)) for k, v in lexicon.table(lexicon.PHRASES).items()]


@cache
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (logged -> log, statuses -> status, news -> news)."""
    return _stemmer().stemWord(word)


class _Stemmer(Protocol):  # snowballstemmer's, which is untyped
    def stemWord(self, word: str) -> str: ...


@cache
def _stemmer() -> _Stemmer:
    import snowballstemmer  # about 15 ms: loaded by the first search, not at start-up

    english: _Stemmer = snowballstemmer.stemmer("english")
    return english


def tokens(text: str) -> list[str]:
    """Lower-case words of a text (names split by case, `_` and `-`; accents folded, so that `problème` and
    `probleme` meet), and each run of CJK script as its overlapping character pairs."""
    out: list[str] = []
    for i, part in enumerate(re.split(_CJK, unicodedata.normalize("NFKC", text))):
        if i % 2:
            out += [part[j : j + 2] for j in range(max(len(part) - 1, 1))]
        else:
            for run in _LETTERS.findall(part):
                folded = run if run.isascii() else _folded(run)
                out += words(folded) if folded.isascii() else [folded.casefold()]
    return out


@cache
def _folded(word: str) -> str:
    """A word without its accents (`Créer` -> Creer); a script other than Latin stays as it is, but for them."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def terms(text: str, stop: bool = True) -> list[str]:
    """Search terms of a text: its tokens stemmed, without stop words (unless `stop` is false)."""
    return [stem(t) for t in tokens(text) if not (stop and t in lexicon.STOP)]


@cache
def _operations() -> dict[str, list[str]]:
    """The operations (`@create`) each verb stem asks for; a verb of no row is an operation of its own."""
    ops: dict[str, list[str]] = {}
    for op, verbs in lexicon.table(lexicon.VERBS).items():
        for verb in verbs:
            ops.setdefault(stem(verb), []).append("@" + op)
    for verb in NAME_VERBS:
        ops.setdefault(stem(verb), ["@" + stem(verb)])
    return ops


@cache
def _synonyms() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for word, expansion in lexicon.table(lexicon.SYNONYMS).items():
        out.setdefault(stem(word), []).extend(stem(w) for w in expansion)
    return out


def operations(name: str, summary: str) -> list[str]:
    """The operations of a command: of its name's first word if that is a verb, else of its last, else of another
    (`datadog_list_monitors`), else of its summary's first word ("Get logs from a container")."""
    ws, first = [stem(w) for w in words(name)], [stem(w) for w in words(summary)[:1]]
    ops = _operations()
    verb = next((w for w in ws[:1] + ws[-1:] + ws[1:-1] + first if w in ops), None)
    return ops[verb] if verb else []


@dataclass
class Query:
    """A query read for search: its terms and their `weights`; the `words` it names (each as written, with its stem
    and synonyms; not its operation, nor what to write, nor a single letter), which of them name `things` (not a
    verb of the lexicon, nor a value such as `4471`, `sixdegree-ai/platform` or a quoted text), its `ops`
    (`@create`), and the `names` it capitalises mid-sentence (`Zendesk`, `Berlin`), which tell whether it asks for
    something the tree has never heard of."""

    weights: dict[str, float]
    words: list[tuple[str, frozenset[str]]] = default(default_factory=list)
    things: list[bool] = default(default_factory=list)
    ops: list[str] = default(default_factory=list)
    names: list[str] = default(default_factory=list)


def read(query: str, nouns: frozenset[str] = frozenset()) -> Query:
    """A query's terms and their weights. Its first word that is not a stop word (or is a verb, like "show")
    stands for its operations if it is a verb, unless the query is a question; other words count for themselves,
    their form as written and their synonyms, less so between "about" (what to write) and "to" (where)."""
    text = unicodedata.normalize("NFKC", query).lower()
    for pattern, replacement in _phrases():
        text = pattern.sub(replacement, text)
    ops, synonyms = _operations(), _synonyms()
    out = Query({}, names=_names(query))
    weights = out.weights

    def add(term: str, weight: float) -> None:
        weights[term] = max(weights.get(term, 0.0), weight)

    found, values = tokens(text), _values(query)
    lead, scale = not found or found[0] not in lexicon.QUESTION, 1.0
    if found and len(found) > 1 and not any(t in lexicon.STOP for t in found) and stem(found[0]) in nouns:
        lead = False  # keywords ("release commits list") that start with a noun of the tree's groups: no verb
    for token in found:
        term = stem(token)
        if token in lexicon.CONTENT and not lead:
            scale = CONTENT_WEIGHT
        elif token in lexicon.DESTINATION:
            scale = 1.0
        elif lead and term in ops:
            lead = False
            out.ops += ops[term]
            for op in ops[term]:
                add(op, OPERATION_WEIGHT)
            if token not in lexicon.STOP:
                add(term, LEAD_GROUP_WEIGHT if term in nouns else 1.0)
        elif token not in lexicon.STOP:
            lead = False
            add(term, scale)
            add("=" + token, scale * EXACT_WEIGHT)
            for syn in synonyms.get(term, []):
                add(syn, scale * SYNONYM_WEIGHT)
            if scale == 1.0 and len(token) > 1:
                out.words.append((token, frozenset([term, *synonyms.get(term, [])])))
                out.things.append(term not in ops and token not in values and term not in out.names)
    return out


def query_weights(query: str, nouns: frozenset[str] = frozenset()) -> dict[str, float]:
    """The terms of a query and their weights (`read`)."""
    return read(query, nouns).weights


_QUOTED = re.compile(r"""(?<!\w)(['"`]).+?\1(?!\w)""")
_VALUE_WORD = re.compile(r"\d|\w[/.:@_#]\w")
MAX_QUERY = 1_000  # characters of a query that are read (`bounded`) ...
MAX_WORD = 64  # ... and of each of its words


def bounded(query: str) -> str:
    """The query as search reads it: its first MAX_QUERY characters, each word cut at MAX_WORD (no request needs
    more, and every step of reading it stays linear in what is kept)."""
    return " ".join(word[:MAX_WORD] for word in query[:MAX_QUERY].split(" "))


def _values(query: str) -> set[str]:
    """The tokens of a query's values: quoted texts and words with a digit or inner `/.:@_#` (`INC-4521`, `7am`,
    `sixdegree-ai/platform`, `jane.doe@company.com`), which name no kind of thing."""
    lower = query.lower()
    quoted = [match.group() for match in _QUOTED.finditer(lower)]
    return {t for text in [*quoted, *(w for w in lower.split() if _VALUE_WORD.search(w))] for t in tokens(text)}


def _names(query: str) -> list[str]:
    """Words a query capitalises after its first (`Zendesk`, `Berlin`; not `API`, `PLATFORM-456` nor `Node.js`),
    stemmed: the names of things."""
    found = []
    for word in query.split()[1:]:
        word = word.strip("?!.,;:()\"'").removesuffix("'s")
        if re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*", word):
            found += [stem(t) for t in tokens(word.lower())]  # as the query's words are read
    return found


def _names_group(query: str, path: str) -> bool:
    """Whether `query` is nothing but the name of a group on `path` (`release` of `github releases list`): it asks
    for what that group holds."""
    asked = tuple(stem(w) for w in command_name(query).split("-"))
    return len(query.split()) <= len(asked) and any(
        tuple(stem(w) for w in group.split("-")) == asked for group in path.split()[:-1]
    )


def meaning(path: str, cmd: Command) -> str:
    """What an embedding model reads of a command: its path and aliases as words, summary, description and
    parameter names."""
    params = ", ".join(" ".join(words(p.name)) for p in cmd.params if not p.name.startswith("@"))
    name = " ".join(words(" ".join([path, *cmd.aliases])))
    return f"{name}: {cmd.summary} {cmd.description[:300]}" + (f" ({params})" if params else "")


def plain(query: str) -> str:
    """What an embedding model reads of a query: its words without its values (`acme/web`, `#19`, quoted text),
    which mean nothing to it but noise."""
    text = _QUOTED.sub(" ", query)
    kept = [w for w in text.split() if not _VALUE_WORD.search(w.strip("?!.,;:()\"'"))]
    return " ".join(kept) or query


def _spellings(aliases: list[str]) -> list[str]:
    """Aliases once each however they are spelt (`list_issues`, `list-issues`: one), so that a name's words are
    counted once in a command's terms."""
    return list({command_name(a): a for a in aliases}.values())


class Index:
    """BM25 postings over a tree's commands (the `search` command itself left out)."""

    def __init__(self, tree: Tree, semantic: tuple[embeddings.Model, float] | None = None) -> None:
        """`semantic`: an embedding model and the share of the score it decides (default: as configured)."""
        self.semantic = semantic or embeddings.configured()
        # the commands' unit vectors in the model, computed at the first search; the last query's cosines with them
        self.vectors: npt.NDArray[np.float32] | None = None
        self._cosines: tuple[str, npt.NDArray[np.float32]] | None = None
        self.docs: list[tuple[str, Command]] = []
        self.terms: list[set[str]] = []  # each command's terms, for how well it `fits` a query ...
        self.heads: list[set[str]] = []  # ... and those of its name, aliases and summary
        self.named: dict[str, list[int]] = defaultdict(list)  # a command by the names a query may give it
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)  # term: (command, weighted count)
        lengths: list[float] = []
        spelled: Counter[str] = Counter()  # the commands' words as written, and how many commands have each
        nouns: set[str] = set()  # the stems of the groups' names (`nouns`)
        for path, node in tree.walk():
            if isinstance(node, Group):
                nouns.update(stem(w) for w in node.name.split("-"))
            if not isinstance(node, Command) or not node.handler.listed:
                continue
            fields = {
                "path": " ".join(path + _spellings(node.aliases)),
                "summary": node.summary,
                "params": " ".join(p.name for p in node.params if not p.name.startswith("@")),
                "description": node.description[:600],
            }
            tf: Counter[str] = Counter()
            head: set[str] = set()
            spelled.update({t for text in fields.values() for t in tokens(text) if t.isascii()})
            for field, weight in FIELD_WEIGHTS:
                for term in terms(fields[field], stop=field not in ("path", "params")):
                    tf[term] += weight
                    if field in ("path", "summary"):
                        head.add(term)
            for word in words(fields["path"]):
                tf["=" + word] += FIELD_WEIGHTS[0][1]
            for op in operations(node.name, node.summary):
                tf[op] += FIELD_WEIGHTS[0][1]
            doc = len(self.docs)
            self.docs.append((" ".join(path), node))
            self.terms.append(set(tf))
            self.heads.append(head)
            for name in {command_name(" ".join(p)) for p in (path, path[1:], *([a] for a in node.aliases)) if p}:
                self.named[name].append(len(self.docs) - 1)  # its path, with or without its domain, and aliases
            lengths.append(sum(tf.values()))
            for term, count in tf.items():
                self.postings[term].append((doc, count))
        self.avg = (sum(lengths) / len(lengths)) if lengths else 1.0
        self.lengths = lengths
        self.weighted = {  # each term's count made its BM25 weight once, not at every search
            term: [(doc, tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[doc] / self.avg))) for doc, tf in posting]
            for term, posting in self.postings.items()
        }
        self.at = {path: doc for doc, (path, _) in enumerate(self.docs)}
        self.nouns = frozenset(nouns)  # a query's first word that names a group may be no verb (`read`)
        self.spelling = Vocabulary(spelled)
        self.spelling.extend(lexicon.words())
        self._clean: tuple[str, str] = ("", "")  # the last query and how it reads (`clean`)

    def clean(self, query: str) -> str:
        """The query with each typo read as the word of the tree (or of search's vocabulary, or of the embedding
        model's, where it is loaded) it is close to (`spelling.py`): "list the opne pull reqeusts" -> "list the open
        pull requests". Values (`acme/billing`, `v1.2`, quoted text) and names it capitalises mid-sentence are left as
        they are."""
        if self._clean[0] == query:
            return self._clean[1]
        if self.semantic is not None and not self.spelling.extended:
            known = getattr(self.semantic[0], "words", None)  # a model that cannot tell its words adds none
            self.spelling.extend(known() if callable(known) else ())
            self.spelling.extended = True
        quoted = [match.span() for match in _QUOTED.finditer(query)]
        out = []
        for i, match in enumerate(re.finditer(r"\S+", query)):
            word = match.group()
            if any(a <= match.start() < b for a, b in quoted) or _VALUE_WORD.search(word.strip("?!.,;:()\"'")):
                out.append(word)
                continue
            out.append(re.sub(r"[A-Za-z]+", partial(self._spell, mid=i > 0), word))
        cleaned = " ".join(out) if any(a != b for a, b in zip(out, query.split(), strict=False)) else query
        self._clean = (query, cleaned)
        return cleaned

    def _spell(self, match: re.Match[str], mid: bool) -> str:
        run = match.group()
        if run.islower() or (not mid and run[:1].isupper() and run[1:].islower()):
            fixed = self.spelling.correct(run.lower())
            return run if fixed == run.lower() else fixed
        return run

    def rarity(self, term: str) -> float:
        """The term's idf, as if the tree had FEW commands at least (a word of one command in three is as telling
        as in a hundred)."""
        n, df = max(len(self.docs), FEW), len(self.postings.get(term, ()))
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def fits(self, query: str, path: str) -> float:
        """How well the command at `path` fits `query`, as many of the rarest possible word's worth: the rarity
        (idf) of each of its words the query has (itself or a synonym; each counted once however many words of the
        query reach it; BODY_WEIGHT of it where only the command's description or parameters have the word, which
        mention many things in passing: "account", "card", "address"), and of the query's operation where it also
        has a word of the query or the query has at most one word the tree has never seen (a detail: "restart the
        *failing* service"; two are what it asks for: "send *flowers* to my *mom*"); less UNHEARD_COST for each word
        of a thing the tree has never seen (up to UNHEARD_MOST: "check my *bank* account *balance*"), and NAME_COST
        for each name it has never heard of (`Zendesk`); with an embedding model, plus COSINE_WEIGHT times its cosine
        above COSINE_FLOOR. A query that is one of the command's names (`get_me`), or the name of a group it is in
        (`release`), fits it fully. Under WEAK, no command fits: what it shares with the query is incidental."""
        if self.at[path] in self.named.get(command_name(query), ()) or _names_group(query, path):
            return 1.0
        query = self.clean(query)
        q, terms, head = read(query, self.nouns), self.terms[self.at[path]], self.heads[self.at[path]]
        shared: dict[str, float] = {}
        unheard = things = 0
        for (token, word), thing in zip(q.words, q.things, strict=True):
            if found := word & terms:
                best = stem(token) if stem(token) in found else max(found, key=self.rarity)
                shared[best] = self.rarity(best) * (1.0 if best in head else BODY_WEIGHT)
            elif not any(t in self.postings for t in word):
                unheard += 1
                things += thing
        mass = sum(shared.values())
        if (ops := terms.intersection(q.ops)) and (shared or unheard < 2):
            mass += max(self.rarity(op) for op in ops)
        fit = mass / self.rarity("") - UNHEARD_COST * min(things, UNHEARD_MOST)
        if (lead := self.lead(query)) is not None:
            own = {t for t in terms if t.startswith("@")}
            fit += GAP_WEIGHT * lead - (OP_COST if q.ops and own and not own.intersection(q.ops) else 0.0)
        return fit

    def lead(self, query: str) -> float | None:
        """How far the embedding model's best cosine with `query` stands above the RUNNER_UP-th best (None without a
        model): a request the tree serves tends to have one command, or a few, much closer than the rest."""
        if (cosines := self.cosines(query)) is None or not len(cosines):
            return None
        top = cosines.copy()  # the array's own methods: numpy is the model's, never an import of the runtime's
        top.partition(len(top) - min(RUNNER_UP, len(top)))
        top = top[-RUNNER_UP:]
        return float(top.max() - top.min())

    def misses(self, query: str, hits: Sequence[tuple[float, str, Command]]) -> bool:
        """Whether no command fits `query`: no hit, or the best fits it under WEAK (WEAK_MODEL with an embedding
        model, whose cosines count in the fit)."""
        if not hits:
            return True
        fit = self.fits(query, hits[0][1])
        return fit < (WEAK_MODEL if self.semantic is not None else WEAK)  # None: no model, or it failed in `fits`

    def no_fit(self, query: str) -> str:
        """The sentence saying that no command fits `query`, naming the words of things no command has (`bank`), which
        tell an agent to look elsewhere rather than reword."""
        q = read(self.clean(query), self.nouns)
        unheard = [
            token
            for (token, word), thing in zip(q.words, q.things, strict=True)
            if thing and not any(t in self.postings for t in word)
        ]
        return (
            f"No command fits {query!r}"
            + (f"; none knows {', '.join(dict.fromkeys(unheard))}" if unheard else "")
            + "."
        )

    def search(
        self, query: str, limit: int | None = None, prefer: Sequence[str] = ()
    ) -> list[tuple[float, str, Command]]:
        """The best `limit` commands for `query` (None: those scoring at least STRONG times the best, up to SHOWN),
        scores of those in the `prefer` domains multiplied by CONTEXT_BOOST (without an embedding model, a command no
        word matches stays out)."""
        scores: dict[int, float] = defaultdict(float)
        n = len(self.docs)
        named = self.named.get(command_name(query), [])  # commands named outright come first (`get_me`)
        query = self.clean(query)
        weights = query_weights(query, self.nouns)
        for term, weight in weights.items():
            posting = self.weighted.get(term)
            if not posting:
                continue
            weighed = weight * math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))  # times its idf
            for doc, norm in posting:
                scores[doc] += weighed * norm
        if self.semantic and self.semantic[1] and weights:  # not only stop words: the model may find what no word does
            scores = self._mixed(query, scores, self.semantic[1])
        if prefer:
            for doc in scores:
                if acts_in(self.docs[doc][0], prefer):
                    scores[doc] *= CONTEXT_BOOST
        for doc in named:
            scores.setdefault(doc, max(scores.values(), default=1.0))  # none of its words counted: stop words
        if len(scores) > (limit or SHOWN):  # only those that can rank: as high as the last shown, or named
            least = heapq.nlargest(limit or SHOWN, scores.values())[-1]
            scores = {doc: score for doc, score in scores.items() if score >= least or doc in named}
        ranked = heapq.nsmallest(
            limit or SHOWN, scores.items(), key=lambda kv: (kv[0] not in named, -kv[1], self.docs[kv[0]][0])
        )
        if limit is None and ranked:
            ranked = [(doc, score) for doc, score in ranked if score >= STRONG * ranked[0][1]]
        places = round((limit or SHOWN) * MODEL_PLACES) if weights and self.semantic is not None else 0
        if places and not self._words_sure(query, ranked):
            kept = (limit or SHOWN) - places  # unasked for a number, the model takes places the words filled only
            ranked = self._closest(query, ranked[:kept], places if limit else len(ranked) - kept) or ranked
        return [(score, self.docs[doc][0], self.docs[doc][1]) for doc, score in ranked]

    def _words_sure(self, query: str, ranked: list[tuple[int, float]]) -> bool:
        """Whether the words' best command fits `query` at least WORDS_SURE (`fits`): they found what it asks."""
        return bool(ranked) and self.fits(query, self.docs[ranked[0][0]][0]) >= WORDS_SURE

    def _closest(self, query: str, kept: list[tuple[int, float]], places: int) -> list[tuple[int, float]]:
        """The (command, score) pairs `kept`, then those of the `places` commands the model finds closest to `query`
        among the others (scored 0: the words found nothing of theirs); [] without a model or a place."""
        if places <= 0 or (cosines := self.cosines(query)) is None or not len(cosines):
            return []
        taken = {doc for doc, _ in kept}
        nearest = (-cosines).argpartition(min(len(kept) + places, len(cosines) - 1))[: len(kept) + places + 1]
        closest = [int(doc) for doc in sorted(nearest, key=lambda doc: -cosines[doc]) if int(doc) not in taken]
        return kept + [(doc, 0.0) for doc in closest[:places]]

    def cosines(self, query: str) -> npt.NDArray[np.float32] | None:
        """The embedding model's cosine of `query` and each command (None without a model, or when it fails: said
        once, and search goes on by words)."""
        if self.semantic is None or not self.docs:
            return None
        if self._cosines is None or self._cosines[0] != query:
            model = self.semantic[0]
            try:
                if self.vectors is None:
                    self.vectors = model.kept([meaning(path, cmd) for path, cmd in self.docs])
                self._cosines = query, embeddings.cosines(self.vectors, model.vectors([plain(query)])[0])
            except (embeddings.Unusable, ValueError) as exc:  # ValueError: the query's vector has another length
                log.warning("embedding model %s: %s; search ranks by words only", model.name, exc)
                self.semantic = None
                return None
        return self._cosines[1]

    def _mixed(self, query: str, scores: dict[int, float], share: float) -> dict[int, float]:
        """BM25 `scores` over their best, mixed with the model's cosines over theirs (any command the model finds
        close, of the CLOSEST closest, joins); the words' scores alone when the model fails."""
        if (found := self.cosines(query)) is None:
            return scores
        cosines = found.clip(0)
        best, closest = max(scores.values(), default=1.0), float(cosines.max(initial=0.0)) or 1.0
        mixed = {doc: (1 - share) * score / best for doc, score in scores.items()}
        near = (-cosines).argpartition(CLOSEST)[:CLOSEST] if len(cosines) > CLOSEST else range(len(cosines))
        weighed = (share / closest) * cosines
        for doc in {*near, *mixed}:  # a command the words found keeps the model's part of its score
            if part := float(weighed[doc]):
                mixed[int(doc)] = mixed.get(int(doc), 0.0) + part
        return mixed
