"""`search WORDS...`: rank a tree's commands by BM25 over their path, summary, description and parameter names.

Words are split (snake, kebab, camel case), lower-cased and made singular. A query word also matches its
everyday synonyms and expansions from a small general lexicon of software and office vocabulary ("PR" ->
pull request, "bug"/"ticket" -> issue, "remove" -> delete), at a lower weight than the word itself.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from .grouping import singular
from .text import words
from .tree import Command, Tree

K1, B = 1.2, 0.75
FIELD_WEIGHTS = (("path", 3), ("summary", 2), ("params", 1), ("description", 1))
SYNONYM_WEIGHT = 0.6
_STOP = set("a an the to of for in on at by with from and or my our your me i we it this that is are be do can "
            "please how what which all some any us there here about who has have".split())  # fmt: skip

_LEXICON = """
pr pull-request; prs pull-request; mr merge-request; repo repository; repos repository; bug issue; ticket issue;
defect issue; problem issue; task issue todo; todo task; story issue; epic issue; msg message; dm direct-message;
chat message; text message; note comment; reply comment; comment reply note; db database; table database;
dir directory folder; folder directory; file document; doc document; docs document; document file; env environment;
config configuration setting; setting configuration; settings configuration; user member people account;
member user; people user; person user contact; teammate user member; contact person; account user profile;
profile user; delete remove; remove delete; erase delete; drop delete; kill stop delete; make create;
add create; new create; write create update; post create send message; send post create;
upload create file; show get list view; see get list; view get; display get list; fetch get; retrieve get;
read get; download get; find search; look search; lookup search; query search; locate search; edit update;
change update; modify update; rename update; set update; email mail message; mail email message; inbox email;
calendar event; meeting event calendar; appointment event; schedule event create; event meeting; ci workflow run;
pipeline workflow; job workflow run; build workflow run; deploy deployment; release tag version; version release;
star favorite; notify notification; alert notification; image picture photo; photo image; picture image;
img image; pic image; branch ref; merge pull-request; review pull-request; commit change; diff change;
channel conversation; thread conversation; dashboard report; metric report; log event; logs log; sheet spreadsheet;
spreadsheet sheet; row record; record row; card task; board project; project board; folder drive; drive file;
payment charge invoice; invoice payment bill; bill invoice; customer client user; client customer;
order purchase; price cost; cost price; weather forecast; forecast weather; map location; place location;
location address; address location; time date; date time; clock time; song track music; track song;
play start; pause stop; info detail get; detail info; status state get; state status; list all; count number;
notify message send notification; announce message send; tell message send; access permission group role user;
permission access role group; role permission group; cve vulnerability security; vuln vulnerability;
vulnerability security cve; security vulnerability; documentation document page wiki; wiki page document;
infrastructure instance server cloud resource; server instance host; host server instance; vm instance server;
monitoring monitor alert metric; alert monitor notification alarm; alarm alert monitor; incident alert outage;
outage incident; oncall on-call schedule; secret credential key; credential secret key; key secret token;
token key credential; container docker image pod; pod container; cluster kubernetes k8s; k8s kubernetes cluster;
kubernetes k8s cluster; spend cost billing; billing cost invoice; graph chart dashboard; chart graph dashboard
"""


def _lexicon() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in _LEXICON.replace("\n", " ").split(";"):
        parts = entry.split()
        if len(parts) >= 2:
            out.setdefault(stem(parts[0]), []).extend(w for p in parts[1:] for w in p.split("-"))
    return out


def stem(word: str) -> str:
    """Singular, and without a trailing -ing or -ed (monitoring -> monitor, deployed -> deploy)."""
    word = singular(word)
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """Search terms of a text: words, lower-cased, stemmed, without stop words."""
    return [stem(w) for w in words(text) if w not in _STOP]


SYNONYMS = _lexicon()


class Index:
    """BM25 postings over a tree's commands (the `search` command itself left out)."""

    def __init__(self, tree: Tree) -> None:
        self.docs: list[tuple[str, Command]] = []
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        lengths: list[float] = []
        for path, node in tree.walk():
            if not isinstance(node, Command) or node.handler.get("kind") == "search":
                continue
            fields = {
                "path": " ".join(path + node.aliases),
                "summary": node.summary,
                "params": " ".join(p.name for p in node.params if not p.name.startswith("@")),
                "description": node.description[:600],
            }
            tf: Counter[str] = Counter()
            for field, weight in FIELD_WEIGHTS:
                for term in terms(fields[field]):
                    tf[term] += weight
            doc = len(self.docs)
            self.docs.append((" ".join(path), node))
            lengths.append(sum(tf.values()))
            for term, count in tf.items():
                self.postings[term].append((doc, count))
        self.avg = (sum(lengths) / len(lengths)) if lengths else 1.0
        self.lengths = lengths

    def search(self, query: str, limit: int = 8) -> list[tuple[float, str, Command]]:
        weights: dict[str, float] = {}
        for term in terms(query):
            weights[term] = max(weights.get(term, 0.0), 1.0)
            for syn in SYNONYMS.get(term, []):
                syn = stem(syn)
                weights[syn] = max(weights.get(syn, 0.0), SYNONYM_WEIGHT)
        scores: dict[int, float] = defaultdict(float)
        n = len(self.docs)
        for term, weight in weights.items():
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc, tf in posting:
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.lengths[doc] / self.avg))
                scores[doc] += weight * idf * norm
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], self.docs[kv[0]][0]))[:limit]
        return [(score, self.docs[doc][0], self.docs[doc][1]) for doc, score in ranked]
