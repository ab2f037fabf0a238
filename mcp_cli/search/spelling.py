"""Typos read as the words they are close to: a tree's vocabulary, looked up by symmetric deletes.

Each word of the vocabulary is filed under itself and under each form it has with one letter deleted; a word of a
query that the vocabulary lacks is looked up by its own such forms (one or two letters deleted), and the candidates
found are checked by their true edit distance (Damerau's: a swap of two neighbouring letters is one edit, `opne` for
open). A word of up to SHORT letters is never corrected (`teh`: too many words lie near it), one of up to SWAP
letters only by a swap of neighbours (`opne`, but not `bank` for back); up to LONG letters, one edit is allowed;
longer ones, two. A word is never read as its own ending (`unresolved` is not `resolved`, `nonempty` not `empty`: a
prefix that turns the meaning round is no slip of the keys). Of several candidates the nearest wins, then the one
more commands have. Every step is linear in the query's words, whatever the vocabulary's size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

SHORT = 3  # letters: a word this short is never corrected
SWAP = 4  # letters: a word this short is corrected only by a swap of neighbouring letters
LONG = 7  # letters: a word up to this long is corrected by one edit at most, a longer one by two


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def distance(a: str, b: str, most: int = 2) -> int:
    """The edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of neighbours), or `most` + 1
    when it is over `most`."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > most:
            return most + 1
        before, row = row, current
    return min(row[-1], most + 1)


class Vocabulary:
    """Words and how many commands have each; `correct` reads a word the vocabulary lacks as its nearest word."""

    def __init__(self, counts: dict[str, int]) -> None:
        """`counts`: the index's words and their document counts."""
        self.counts = dict(counts)
        self._filed: dict[str, list[str]] | None = None  # built at the first word to correct
        self.common: set[str] = set()  # words of the language, never corrected though no command has them (`extend`)
        self.extended = False  # by a model's words

    def extend(self, common: Iterable[str]) -> None:
        """Words of the language (search's general vocabulary; an embedding model's whole-word tokens: `bank`,
        `balance`), which are never read as typos though no command has them."""
        self.common |= set(common)

    def _index(self) -> dict[str, list[str]]:
        if self._filed is None:
            filed: dict[str, list[str]] = defaultdict(list)
            for word in self.counts:
                if len(word) > SHORT and word.isalpha():
                    filed[word].append(word)
                    for form in _deletes(word):
                        filed[form].append(word)
            self._filed = dict(filed)
        return self._filed

    def correct(self, word: str) -> str:
        """`word` if the vocabulary has it, or it is too short to tell, or no word lies near it; else the nearest."""
        if word in self.counts or word in self.common or len(word) <= SHORT or not word.isalpha():
            return word
        most = 1 if len(word) <= LONG else 2
        forms = {word} | _deletes(word)
        if most > 1:
            forms |= {d for form in list(forms) for d in _deletes(form)}
        filed = self._index()
        candidates = {c for form in forms for c in filed.get(form, ())}
        if len(word) <= SWAP:
            candidates = {c for c in candidates if len(c) == len(word) and sorted(c) == sorted(word)}
        candidates = {c for c in candidates if not word.endswith(c)}  # a prefix is no typo: `unresolved`
        scored = [(distance(word, c, most), -self.counts[c], c) for c in candidates]
        best = min((s for s in scored if s[0] <= most), default=None)
        return best[2] if best else word
