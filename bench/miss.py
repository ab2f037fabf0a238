"""Does a combination of search's signals judge "no command fits" better than `Index.fits` does today? (issue 38)

Every committed blind set (bench/data/fresh, fresh2, fresh3, fresh4: `bench/fresh.py`; both halves) and the no-fit
requests (bench/data/no-fit, on Boundary's, GitHub's and ProgressiveMCPBench's tools: `bench/nofit.py`) are read
once through the default install's index (WordLlama judging, ranking by words). For each request: the signals of
its best hit (those `fits` sums, taken apart, and others search has: the embedding model's cosines, the share of the
request's words the hit has, the gap to the second hit), whether it is answerable, whether the best hit is right,
and the top DEPTH hits with their own signals (for re-ranking).

Then, leaving one set out at a time (train on the others, test on it; the no-fit requests are a fifth set, of
unanswerable requests only):

- the trade-off each judgement gives on the held-out set: the share of unanswerable requests declined where 2% of
  answerable ones are, the share of answerable ones declined where 85% of unanswerable ones are (issue 38's two
  targets), and the share of unanswerable ones declined at today's rate of wrong declines on that set; for today's
  `fits`, for the best single signal (chosen on the other sets) and for logistic regressions over the signals;
- the same with a threshold chosen on the other sets (as it would ship): held-out declines, and Boundary's prompts'
  Recall@1/@5 with a decline counted as a miss (bench/nofit.py's measure);
- where the wrong declines come from: answerable requests whose right tool is not in the top 5 at all;
- re-ranking the top DEPTH hits by the lexical score plus the cosine, coverage and a missing operation, weights chosen
  on the other sets: held-out Recall@1/@5 and Boundary's.

`python -m bench.miss`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mcp_cli.search import ranking
from mcp_cli.search.ranking import Index, command_name, read, stem

from . import fresh, nofit
from .corpora import boundary
from .economy import tree_of

Array = npt.NDArray[np.float64]
DEPTH = 10  # hits read per request (re-ranking reorders these)
FOLDS = ("fresh1", "fresh2", "fresh3", "fresh4", "nofit")
FRESH = {"first": "fresh1", "second": "fresh2", "third": "fresh3", "fourth": "fresh4"}
WRONG, RIGHT = 0.02, 0.85  # issue 38: answerable declined at most, unanswerable declined at least
SIGNALS = (
    "fit",  # Index.fits: today's judgement, declined under ranking.WEAK_MODEL
    "words",  # the rarity the hit shares with the request, over the rarest word's (fits' lexical part)
    "operation",  # the rarity of the request's operation the hit has, where fits counts it
    "things",  # words of things the tree has never heard of (at most ranking.UNHEARD_MOST)
    "unheard",  # words of the request the tree has never heard of, of any kind
    "coverage",  # the share of the request's words (or their synonyms) the hit has
    "op missing",  # 1 when the request asks for an operation the hit, which has operations, lacks
    "lead",  # the model's best cosine over its RUNNER_UP-th best
    "best cosine",  # the model's best cosine with any command
    "cosine",  # the model's cosine with the hit
    "cosine behind",  # the best cosine less the hit's
    "gap",  # (the hit's lexical score - the second's) / the hit's
)
COMPACT = ("words", "lead", "op missing", "unheard", "coverage")  # chosen by leaving signals out of ALL on these folds


@dataclass
class Hit:
    right: bool
    score: float
    cosine: float
    coverage: float
    op_missing: float


@dataclass
class Row:
    fold: str
    answerable: bool
    declined: bool  # by today's judgement (`Index.misses`)
    signals: dict[str, float] | None  # of the best hit; None without a hit
    hits: list[Hit] = field(default_factory=list)

    @property
    def found1(self) -> bool:
        return bool(self.hits) and self.hits[0].right

    @property
    def found5(self) -> bool:
        return any(h.right for h in self.hits[:5])


def signals(index: Index, query: str, path: str) -> dict[str, float]:
    """The parts of `index.fits(query, path)` taken apart, and the other signals of that hit (`SIGNALS` but `gap`
    and the query's cosines). The parts are computed as `fits` computes them; `collect` checks they sum to it."""
    doc = index.at[path]
    named = doc in index.named.get(command_name(query), ())
    query = index.clean(query)
    q, terms, head = read(query), index.terms[doc], index.heads[doc]
    shared: dict[str, float] = {}
    unheard = things = found = 0
    for (token, word), thing in zip(q.words, q.things, strict=True):
        if hit := word & terms:
            found += 1
            best = stem(token) if stem(token) in hit else max(hit, key=index.rarity)
            shared[best] = index.rarity(best) * (1.0 if best in head else ranking.BODY_WEIGHT)
        elif not any(t in index.postings for t in word):
            unheard += 1
            things += thing
    unit = index.rarity("")
    ops = terms.intersection(q.ops)
    operation = max(index.rarity(op) for op in ops) / unit if ops and (shared or unheard < 2) else 0.0
    own = {t for t in terms if t.startswith("@")}
    missing = float(bool(q.ops and own and not own.intersection(q.ops)))
    lead = index.lead(query) or 0.0
    words = sum(shared.values()) / unit
    fit = words + operation - ranking.UNHEARD_COST * min(things, ranking.UNHEARD_MOST)
    fit += ranking.GAP_WEIGHT * lead - ranking.OP_COST * missing
    return {
        "fit": 1.0 if named else fit,
        "words": words,
        "operation": operation,
        "things": float(min(things, ranking.UNHEARD_MOST)),
        "unheard": float(unheard),
        "coverage": found / max(len(q.words), 1),
        "op missing": missing,
        "lead": lead,
    }


def read_request(index: Index, fold: str, text: str, expected: Sequence[tuple[str, str]]) -> tuple[Row, int]:
    """A request's row, and 1 where the signals taken apart do not sum to `fits` (0 where they do)."""
    hits = index.search(text, DEPTH)
    cosines = index.cosines(index.clean(text))
    assert cosines is not None, "bench.miss needs the default embedding model (WordLlama)"
    best = float(cosines.max())
    row = Row(fold, bool(expected), index.misses(text, index.search(text)), None)
    drift = 0
    for i, (score, path, cmd) in enumerate(hits):
        found = signals(index, text, path)
        cosine = float(cosines[index.at[path]])
        row.hits.append(
            Hit(
                (str(cmd.handler.server), str(cmd.handler.tool)) in expected,
                score,
                cosine,
                found["coverage"],
                found["op missing"],
            )
        )
        if i == 0:
            drift = int(abs(found["fit"] - index.fits(text, path)) > 1e-9)
            second = hits[1][0] if len(hits) > 1 else 0.0
            found |= {"best cosine": best, "cosine": cosine, "cosine behind": best - cosine}
            found["gap"] = (score - second) / score if score else 0.0
            row.signals = found
    return row, drift


def collect() -> tuple[list[Row], list[Row], int]:
    """The rows of the FOLDS, Boundary's prompts' rows, and how many best hits' signals do not sum to `fits`."""
    indexes: dict[str, Index] = {}

    def index_of(name: str) -> Index:
        if name not in indexes:
            indexes[name] = Index(tree_of(fresh.corpus(name)))
        return indexes[name]

    rows, drift = [], 0
    for which, fold in FRESH.items():
        folder, names = fresh.SETS[which]
        for name in names:
            for r in fresh.requests(name, folder):
                row, off = read_request(index_of(name), fold, r.text, [(s, t) for s, t in r.expected])
                rows.append(row)
                drift += off
    for name in ("boundary", "github", "progressive"):
        for q in nofit.queries():
            row, off = read_request(index_of(name), "nofit", q, [])
            rows.append(row)
            drift += off
    prompts = []
    for prompt, needed in boundary().tasks:
        row, off = read_request(index_of("boundary"), "boundary", prompt, needed[:1])
        prompts.append(row)
        drift += off
    return rows, prompts, drift


def matrix(rows: Sequence[Row], names: Sequence[str]) -> Array:
    """The signals of rows with a hit, one column per name."""
    return np.array([[r.signals[n] for n in names] for r in rows if r.signals is not None], dtype=np.float64)


def logistic(x: Array, y: Array, weight: Array, ridge: float = 1.0, steps: int = 50) -> Array:
    """Coefficients (the last the intercept) of an L2-penalised, weighted logistic regression, by Newton's method."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(xb.shape[1])
    penalty = ridge * np.diag(np.r_[np.ones(x.shape[1]), 0.0])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ beta))
        gradient = xb.T @ (weight * (p - y)) + penalty @ beta
        hessian = (xb * (weight * p * (1 - p))[:, None]).T @ xb + penalty
        beta -= np.linalg.solve(hessian, gradient)
    return beta


@dataclass
class Judge:
    """A judgement's score (higher: the request is answerable); declined under a threshold. A request without a hit
    scores -inf: always declined."""

    names: tuple[str, ...]
    beta: Array  # coefficients over the standardised signals, then the intercept
    mean: Array
    scale: Array

    @classmethod
    def trained(cls, rows: Sequence[Row], names: Sequence[str]) -> Judge:
        """A logistic regression on rows (answerable against not, each class weighing the same in all)."""
        hit = [r for r in rows if r.signals is not None]
        x = matrix(hit, names)
        y = np.array([r.answerable for r in hit], dtype=np.float64)
        mean, scale = x.mean(0), x.std(0) + 1e-9
        weight = np.where(y > 0, 1.0, y.sum() / max(len(y) - y.sum(), 1))
        return cls(tuple(names), logistic((x - mean) / scale, y, weight), mean, scale)

    def scores(self, rows: Sequence[Row]) -> Array:
        out = np.full(len(rows), -np.inf)
        at = [i for i, r in enumerate(rows) if r.signals is not None]
        if at:
            x = (matrix([rows[i] for i in at], self.names) - self.mean) / self.scale
            out[at] = x @ self.beta[:-1] + self.beta[-1]
        return out


def single(name: str) -> Callable[[Sequence[Row]], Array]:
    """One signal as a score (-inf without a hit)."""

    def scores(rows: Sequence[Row]) -> Array:
        return np.array([r.signals[name] if r.signals is not None else -np.inf for r in rows])

    return scores


def threshold_at(score: Array, answerable: npt.NDArray[np.bool_], wrong: float) -> float:
    """The threshold declining (score < it) at most `wrong` of the answerable requests."""
    kept = np.sort(score[answerable])
    return float(kept[min(int(np.floor(wrong * len(kept))), len(kept) - 1)])


def trade_off(score: Array, answerable: npt.NDArray[np.bool_], wrong_now: float) -> tuple[float, float, float]:
    """Unanswerable declined where WRONG of the answerable are; answerable declined where RIGHT of the unanswerable
    are; unanswerable declined where `wrong_now` of the answerable are."""
    at_wrong = float((score[~answerable] < threshold_at(score, answerable, WRONG)).mean())
    unanswerable = np.sort(score[~answerable])
    t = unanswerable[int(np.ceil(RIGHT * len(unanswerable))) - 1]  # declining score <= t: RIGHT of them at least
    at_right = float((score[answerable] <= t).mean())
    now = float((score[~answerable] < threshold_at(score, answerable, wrong_now)).mean())
    return at_wrong, at_right, now


def auc(score: Array, answerable: npt.NDArray[np.bool_]) -> float:
    a, u = score[answerable], score[~answerable]
    return float((a[:, None] > u[None, :]).mean() + 0.5 * (a[:, None] == u[None, :]).mean())


def best_single(rows: Sequence[Row]) -> str:
    """The signal of the highest AUC on rows (answerable against not)."""
    answerable = np.array([r.answerable for r in rows])
    return max(SIGNALS, key=lambda n: auc(single(n)(rows), answerable))


def declines(rows: Sequence[Row], prompts: Sequence[Row]) -> list[str]:
    """The held-out trade-off table and the deployed-threshold table."""
    lines = [
        "Held-out trade-off (thresholds read off the held-out set: how well each judgement separates its requests). "
        f"Each cell: unanswerable declined at {WRONG:.0%} answerable declined / answerable declined at {RIGHT:.0%} "
        "unanswerable declined / unanswerable declined at today's rate of answerable declined; AUC.",
        "",
        "| held out | today (fixed threshold): answerable / unanswerable declined | `fits` as a score | "
        "best single signal (chosen on the others) | logistic, all signals | logistic, compact |",
        "|---|---|---|---|---|---|",
    ]
    deployed: dict[str, list[str]] = {"compact": [], "all": []}
    for fold in FOLDS:
        train = [r for r in rows if r.fold != fold]
        test = [r for r in rows if r.fold == fold]
        answerable = np.array([r.answerable for r in test])
        judges = {"all": Judge.trained(train, SIGNALS), "compact": Judge.trained(train, COMPACT)}
        today = np.array([r.declined for r in test])
        for name, judge in judges.items():  # a threshold chosen on the training folds, as it would ship
            train_answerable = np.array([r.answerable for r in train])
            train_scores = judge.scores(train)
            now_wrong = float(np.mean([r.declined for r in train if r.answerable]))
            cells = []
            for wrong in (WRONG, now_wrong):
                t = threshold_at(train_scores, train_answerable, wrong)
                held = judge.scores(test) < t
                kept = ~(judge.scores(prompts) < t)
                r1 = np.mean([p.found1 for p in prompts] * kept)
                r5 = np.mean([p.found5 for p in prompts] * kept)
                w = f"{held[answerable].mean():.0%}" if answerable.any() else "-"
                cells.append(f"{w} / {held[~answerable].mean():.0%} (Boundary {r1:.3f} / {r5:.3f})")
            now = f"{today[answerable].mean():.0%}" if answerable.any() else "-"
            deployed[name].append(f"| {fold} | {now} / {today[~answerable].mean():.0%} | " + " | ".join(cells) + " |")
        if not answerable.any():
            continue
        wrong_now = float(today[answerable].mean())
        chosen = best_single(train)
        cells = [f"{today[answerable].mean():.0%} / {today[~answerable].mean():.0%}"]
        for label, score in (
            ("", single("fit")(test)),
            (f"`{chosen}`: ", single(chosen)(test)),
            ("", judges["all"].scores(test)),
            ("", judges["compact"].scores(test)),
        ):
            a, b, c = trade_off(score, answerable, wrong_now)
            cells.append(f"{label}{a:.0%} / {b:.0%} / {c:.0%}; {auc(score, answerable):.3f}")
        lines.append(f"| {fold} | " + " | ".join(cells) + " |")
    r1 = np.mean([p.found1 and not p.declined for p in prompts])
    r5 = np.mean([p.found5 and not p.declined for p in prompts])
    for name, table in deployed.items():
        lines += [
            "",
            f"Deployed (logistic, {name}; threshold chosen on the other folds at {WRONG:.0%} of their answerable "
            "declined, and at today's rate on them): held-out answerable / unanswerable declined (Boundary's "
            f"prompts' R@1 / R@5 with a decline counted a miss; today {r1:.3f} / {r5:.3f}).",
            "",
            f"| held out | today | at {WRONG:.0%} | at today's rate |",
            "|---|---|---|---|",
            *table,
        ]
    everything = Judge.trained(rows, COMPACT)
    lines += [
        "",
        "Compact logistic trained on all five folds (standardised signals): "
        + ", ".join(f"{n} {b:+.2f}" for n, b in zip(COMPACT, everything.beta, strict=False))
        + f", intercept {everything.beta[-1]:+.2f}.",
    ]
    return lines


def unfindable(rows: Sequence[Row]) -> list[str]:
    """How much of today's wrong declines no judgement of the best hit can mend: the right tool is not in the top 5."""
    lines = [
        "| set | answerable | R@1 / R@5 / R@10 | declined today | of those, right tool not in the top 5 |",
        "|---|---|---|---|---|",
    ]
    for fold in FOLDS[:4]:
        a = [r for r in rows if r.fold == fold and r.answerable]
        declined = [r for r in a if r.declined]
        lines.append(
            f"| {fold} | {len(a)} | {np.mean([r.found1 for r in a]):.2f} / {np.mean([r.found5 for r in a]):.2f} / "
            f"{np.mean([any(h.right for h in r.hits) for r in a]):.2f} | {len(declined) / len(a):.0%} | "
            f"{np.mean([not r.found5 for r in declined]):.0%} |"
        )
    return lines


WEIGHTS = list(itertools.product((0, 0.25, 0.5, 1, 2), (0, 0.25, 0.5), (0, 0.2)))  # cosine, coverage, op missing


def reranked(rows: Sequence[Row], w: tuple[float, float, float]) -> tuple[float, float]:
    """R@1 and R@5 of rows' top DEPTH hits re-scored: score over the best's + w's cosine, coverage, - op missing."""
    r1 = r5 = 0
    for r in rows:
        if not r.hits:
            continue
        top = r.hits[0].score or 1.0
        score = [h.score / top + w[0] * h.cosine + w[1] * h.coverage - w[2] * h.op_missing for h in r.hits]
        order = sorted(range(len(r.hits)), key=lambda i: -score[i])
        r1 += r.hits[order[0]].right
        r5 += any(r.hits[i].right for i in order[:5])
    return r1 / max(len(rows), 1), r5 / max(len(rows), 1)


def reranking(rows: Sequence[Row], prompts: Sequence[Row]) -> list[str]:
    lines = [
        "| held out | weights (cosine, coverage, op missing) | held-out R@1 / R@5 today -> re-ranked | "
        "Boundary R@1 / R@5 today -> re-ranked |",
        "|---|---|---|---|",
    ]
    answerable = [r for r in rows if r.answerable]
    for fold in FOLDS[:4]:
        train = [r for r in answerable if r.fold != fold]
        test = [r for r in answerable if r.fold == fold]
        w = max(WEIGHTS, key=lambda w: sum(reranked(train, w)))
        (a1, a5), (b1, b5) = reranked(test, (0, 0, 0)), reranked(test, w)
        (c1, c5), (d1, d5) = reranked(prompts, (0, 0, 0)), reranked(prompts, w)
        lines.append(
            f"| {fold} | {w} | {a1:.3f} / {a5:.3f} -> {b1:.3f} / {b5:.3f} | "
            f"{c1:.3f} / {c5:.3f} -> {d1:.3f} / {d5:.3f} |"
        )
    return lines


def main() -> None:
    rows, prompts, drift = collect()
    answerable = sum(r.answerable for r in rows)
    print(
        f"{len(rows)} requests ({answerable} answerable, {len(rows) - answerable} not) in {len(FOLDS)} folds; "
        f"{len(prompts)} Boundary prompts; best hits whose signals taken apart do not sum to `fits`: {drift}",
        "",
        *declines(rows, prompts),
        "",
        "Where today's wrong declines come from:",
        "",
        *unfindable(rows),
        "",
        "Re-ranking the top hits, weights chosen on the other fresh sets (R@1 + R@5):",
        "",
        *reranking(rows, prompts),
        sep="\n",
    )


if __name__ == "__main__":
    main()
