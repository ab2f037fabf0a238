"""The one place that cuts answers: every answer fits a token budget, the rest is kept for its next parts, and
list-shaped JSON can come back compact (TOON or a table).

A call may lead with reserved options, which the runtime takes before it parses anything: `--budget N` (tokens for
this answer), `--format json|toon|table`, `--more ID:FROM` (the next part of a kept answer), and `--prog NAME` (how
the caller runs the tool, which help and the notes' calls name: an exported skill's script passes its path, so that
what it prints runs as printed). They are taken when
they come before the command's path, always, and after it unless the command has an option of the same name (then
it is the command's). An answer over its budget is cut at whole lines, whole array items, or the items of a JSON
object's arrays, with a note of what was shown, of how much, and the exact call for the next part, which is answered
from the kept answer without calling anything again. Nothing is cut without a note.

Tokens are estimated as characters / 3 (`result.tokens`): o200k_base reads JSON and logs at about 3.3 characters
a token, so the estimate errs on the safe side without loading a tokenizer.
"""

from __future__ import annotations

import bisect
import functools
import json
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import HandlerError, NotFound, UsageError
from ..result import CHARS_PER_TOKEN, Result, fits, tokens
from ..types import shown, whole_option
from .kept import SECONDS, Entry, NotKept, Store

if TYPE_CHECKING:
    from ..entities import Context
    from ..tree import Tree

BUDGET_MIN = 500  # tokens: room for a note and a useful part
NOTE = 200  # tokens kept for the note (it takes 80 to 150)
FORMS = ("json", "toon", "table")
AUTO = 1_000  # tokens: a JSON answer this big whose arrays are tables comes as TOON (bench/tasks.py measured it)
PIECES = 8  # pieces of a budget's room that over-long lines are cut in
LESS = "Ask for less: a narrower call, `| jq FILTER`, `| head N`, or a bigger `--budget N`."


@dataclass
class Asked:
    """What a call asks of its answer, and the call itself without the reserved options."""

    tokens: list[str]
    budget: int | None = None
    form: str | None = None
    more: tuple[str, int] | None = None
    prog: str | None = None  # what the notes' calls start with (None: the tool's name)

    def options(self) -> list[str]:
        """The reserved options given, as they are written again in the call for a next part."""
        budget = ["--budget", str(self.budget)] if self.budget else []
        return budget + (["--format", self.form] if self.form else [])


def asked(tokens: list[str], flags_of: Callable[[list[str]], Collection[str] | None]) -> Asked:
    """Take the reserved options out of `tokens`; `flags_of` gives the option flags of the command a call reaches
    (its own `--budget` stays its own; None: its options are not known, so all are its own). UsageError for a bad
    value."""
    out = Asked([])
    values: dict[str, str] = {}
    rest = list(tokens)
    while rest and _name(rest[0]) in _RESERVED:  # before the command's path: always ours
        _take(rest, 0, values)
    own = flags_of(rest) if "|" not in rest else None
    if own is not None:  # one command: after its path too, unless it has the option itself
        i = 0
        while i < len(rest) and rest[i] != "--":
            if _name(rest[i]) in _RESERVED and _name(rest[i]) not in own:
                _take(rest, i, values)
            else:
                i += 1
    out.tokens = rest
    if "--budget" in values:
        takes = f"--budget takes a number of tokens, at least {BUDGET_MIN:,}"
        out.budget = whole_option(values["--budget"].replace(",", "_"), takes, BUDGET_MIN, 8000)
    if "--format" in values:
        if values["--format"] not in FORMS:
            raise UsageError(f"--format takes one of {', '.join(FORMS)}, not {values['--format']!r}.")
        out.form = values["--format"]
    if "--more" in values:
        key, colon, start = values["--more"].partition(":")
        takes = "--more takes ID:FROM as an answer's note gives it (`--more k7Qx2m:41`)"
        if not key or not colon:
            raise UsageError(f"{takes}, not {shown(values['--more'])}.")
        out.more = (key, whole_option(start, f"{takes}; FROM counts from 1", 1, 41))
    if "--prog" in values:
        if not values["--prog"].strip():
            raise UsageError("--prog takes how the caller runs the tool (`scripts/pdf.sh`), not ''.")
        out.prog = values["--prog"]
    return out


_RESERVED = ("--budget", "--format", "--more", "--prog")


def leading(tokens: list[str]) -> int:
    """How many of `tokens` the reserved options at their front take (options put after them win)."""
    at = 0
    while at < len(tokens) and _name(tokens[at]) in _RESERVED:
        at += 1 if "=" in tokens[at] else 2
    return min(at, len(tokens))


def _name(token: str) -> str:
    return token.partition("=")[0] if token.startswith("--") else token


def _take(rest: list[str], i: int, values: dict[str, str]) -> None:
    """Move the reserved option at `rest[i]` (`--x V` or `--x=V`) into `values`."""
    name, eq, value = rest[i].partition("=")
    if not eq:
        if i + 1 >= len(rest):
            raise UsageError(f"{name} needs a value.")
        value = rest.pop(i + 1)
    del rest[i]
    values[name] = value


# What an answer is made of: its units (lines, pieces of one long line, JSON array items) and how parts render


@dataclass
class Body:
    """A whole answer as units, rendered a part at a time. `kind`: "lines", "chars" (pieces of long lines), "json"
    (`units` are [key, item] pairs: key None for a top-level array's items, else the member of an object whose
    arrays are cut; `head` holds the object's other members, `order` its member names)."""

    kind: str
    units: list[Any]
    form: str = "json"
    indent: int | None = None
    head: dict[str, Any] | None = None
    order: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._last: dict[tuple[int, int], tuple[str, int | None]] = {}  # the last two renderings and their tokens:
        # parts are measured while a part's end is sought, then one is answered

    def render(self, a: int, b: int) -> str:
        return self._rendered(a, b)[0]

    def count(self, a: int, b: int) -> int:
        """The tokens of units a..b's rendering (`result.tokens`), counted once."""
        text, count = self._rendered(a, b)
        if count is None:
            count = tokens(text)
            self._last[(a, b)] = (text, count)
        return count

    def _rendered(self, a: int, b: int) -> tuple[str, int | None]:
        got = self._last.get((a, b))
        if got is not None:
            return got
        if self.kind == "lines":
            text = "\n".join(self.units[a:b])
        elif self.kind == "chars":
            text = "".join(self.units[a:b])
        else:
            text = encode(self.value(a, b), self.form, self.indent)
        if len(self._last) > 1:
            del self._last[next(iter(self._last))]
        self._last[(a, b)] = (text, None)
        return text, None

    def value(self, a: int, b: int) -> Any:
        """The JSON value of units a..b: the items of an array, or the object with its arrays cut to them."""
        if self.head is None:
            return [item for _, item in self.units[a:b]]
        shown: dict[str, list[Any]] = {}
        for key, item in self.units[a:b]:
            shown.setdefault(key, []).append(item)
        return {k: self.head[k] if k in self.head else shown[k] for k in self.order if k in self.head or k in shown}

    def describe(self, a: int, b: int) -> str:
        """What units a..b are: `lines 1-212 of 5,301`; `items 1-40 of 600 (entities 1-40 of 600; relations none)`."""
        n = len(self.units)
        if self.kind == "chars":
            size = sum(len(u) for u in self.units)
            before = sum(len(u) for u in self.units[:a])
            shown = before + sum(len(u) for u in self.units[a:b])
            return f"characters {before + 1:,}-{shown:,} of {size:,}"
        what = f"{'lines' if self.kind == 'lines' else 'items'} {a + 1:,}-{b:,} of {n:,}"
        if self.head is None:
            return what
        per = []
        for key in self.order:
            at = [i for i, (k, _) in enumerate(self.units) if k == key]
            if not at:
                continue
            inside = [j for j, i in enumerate(at) if a <= i < b]
            got = f"{inside[0] + 1:,}-{inside[-1] + 1:,}" if inside else "none"
            per.append(f"{key} {got} of {len(at):,}")
        return f"{what} ({'; '.join(per)})"

    @functools.cached_property
    def sizes(self) -> list[int]:
        """About how many characters each unit takes (worked out once)."""
        if self.kind != "json":
            return [len(u) + 1 for u in self.units]
        size = _sizer()
        return [size(item) + 1 for _, item in self.units]


def _sizer() -> Callable[[Any], int]:
    """len(json.dumps(value, ensure_ascii=False)) through one encoder for all values: json.dumps makes one a call,
    which costs more than encoding an item (the standard library's C encoder where it has one)."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)  # what json.dumps itself uses; not in every Python
    if make is None:
        return lambda value: len(json.dumps(value, ensure_ascii=False))
    made = make(None, encoder.JSONEncoder().default, encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: sum(map(len, made(value, 0)))


def encode(value: Any, form: str, indent: int | None = None) -> str:
    if form == "toon":
        import toon_format

        try:
            return str(toon_format.encode(value))
        except ValueError:  # nested past its encoder's depth: as deep JSON, for `fit` to answer as text
            raise RecursionError("the JSON nests too deeply for TOON") from None
    if form == "table":
        return table(value)
    return json.dumps(value, ensure_ascii=False, indent=indent)


def tabular(value: Any) -> bool:
    """Whether `value` is an array of at least two objects with the same keys and scalar values."""
    if not (isinstance(value, list) and len(value) > 1 and all(isinstance(v, dict) for v in value)):
        return False
    keys = list(value[0])
    if not all(list(v) == keys for v in value):
        return False
    return not any(isinstance(x, (dict, list)) for v in value for x in v.values())


def table(value: Any) -> str:
    """A table per tabular array (a header line, then one line per item, cells split by ` | `); other values as
    JSON lines, `key: value`."""
    if tabular(value):
        keys = list(value[0])
        rows = [" | ".join(keys)] + [" | ".join(_cell(v[k]) for k in keys) for v in value]
        return "\n".join(rows)
    if isinstance(value, dict):
        return "\n".join(
            f"{k} ({len(v)}):\n{table(v)}" if tabular(v) else f"{k}: {json.dumps(v, ensure_ascii=False)}"
            for k, v in value.items()
        )
    return json.dumps(value, ensure_ascii=False, indent=1)


def _cell(x: Any) -> str:
    return x.replace("\n", "\\n").replace("|", "\\|") if isinstance(x, str) else json.dumps(x)


def compactable(value: Any) -> bool:
    """Whether the JSON `value` is list-shaped: a tabular array, or an object holding one."""
    if tabular(value):
        return True
    return isinstance(value, dict) and any(tabular(v) for v in value.values())


def shape(text: str, form: str | None, value: Any = None) -> Body:
    """`text` as units: JSON whose top level is an array, or an object with arrays, as items; else lines. `form`:
    the form asked for (None: TOON where the answer is big and tabular, else as it came); `value`: the JSON value
    `text` was written from, when it is known (not parsed again)."""
    stripped = text.strip()
    if stripped[:1] not in ("[", "{"):
        value = None
    elif value is None:
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
    chosen = form
    if value is not None and form is None and not fits(text, AUTO) and compactable(value):
        chosen = "toon"
    if isinstance(value, list) and value:
        return Body("json", [[None, v] for v in value], chosen or "json", _indent(stripped))
    if isinstance(value, dict) and any(isinstance(v, list) and v for v in value.values()):
        head = {k: v for k, v in value.items() if not (isinstance(v, list) and v)}
        units = [[k, item] for k, v in value.items() if isinstance(v, list) and v for item in v]
        return Body("json", units, chosen or "json", _indent(stripped), head, list(value))
    if value is not None and form is not None:  # another JSON value in the form asked for
        return Body("lines", encode(value, form, 1).split("\n"))
    return Body("lines", text.split("\n"))


def _indent(text: str) -> int | None:
    """The indentation the JSON was written with (None: compact)."""
    at = text.find("\n")
    if at < 0:
        return None
    line = ""
    while at >= 0 and not line.strip():  # the first line after the first that is not blank (not every line split)
        end = text.find("\n", at + 1)
        line, at = text[at + 1 : end if end >= 0 else len(text)], end
    return len(line) - len(line.lstrip(" ")) or 2


def finer(body: Body, room: int) -> Body:
    """`body` again in units that each fit `room` characters: JSON as the lines of its rendering, lines longer than
    `room` in pieces."""
    if body.kind == "json" and max(body.sizes, default=0) * 2 > room:
        body = Body("lines", encode(body.value(0, len(body.units)), body.form, body.indent or 1).split("\n"))
    if body.kind == "lines" and max(body.sizes, default=0) > room:
        text = "\n".join(body.units)
        step = max(room // PIECES, 64)
        body = Body("chars", [text[i : i + step] for i in range(0, len(text), step)])
    return body


def end_of(body: Body, start: int, budget: int) -> int:
    """Where the part from `start` ends: the most units whose rendering fits `budget` tokens beside the note, at
    least one. A rendering longer than 4 characters a token is over, so only units within that are tried (twice as
    many for JSON, whose compact form TOON can halve). Parts are rendered where the tokens measured so far put the
    limit (they grow about as the units' sizes do): a few renderings, not one per halving (and a halving whenever
    two did not halve what was left, once one was too long)."""
    n, limit = len(body.units), budget - NOTE
    bound = 4 * limit * (2 if body.kind == "json" else 1)
    sizes, upto, hi = body.sizes, [0], start  # upto[k]: the sizes of units start..start+k
    while hi < n and upto[-1] + sizes[hi] <= bound:
        upto.append(upto[-1] + sizes[hi])
        hi += 1
    lo, hi = start + 1, max(hi, start + 1)
    inside, over = (0, 0), (0, 0)  # (size, tokens) of the longest part measured that fits, the shortest that does not
    lefts: list[int] = []  # units left to search before each rendering since one did not fit
    while lo < hi:
        if len(lefts) > 1 and hi - lo > lefts[-2] // 2:  # two renderings did not halve them: halve them
            mid = (lo + hi + 1) // 2
        else:  # where the tokens measured reach the limit: between a part that fits and one that does not, else in
            (s0, t0), (s1, t1) = inside, over  # proportion to the longest that fits (3 characters a token at first)
            aim = s0 + (limit - t0) * (s1 - s0) / max(t1 - t0, 1) if s1 else limit * (s0 / t0 if t0 else 3)
            mid = min(max(bisect.bisect_right(upto, aim) - 1 + start, lo + 1), hi)
        text, count = body.render(start, mid), body.count(start, mid)
        lefts += [hi - lo] if over[0] else []
        if len(text) <= 4 * limit and count <= limit:  # fits(text, limit)
            lo, inside = mid, (upto[min(mid - start, len(upto) - 1)], count)
        else:
            hi, over = mid - 1, (upto[min(mid - start, len(upto) - 1)], count)
    return lo


# Fitting answers


def owner(context: Context | None) -> str | None:
    return context.key if context is not None else None


def call_text(tree: Tree, tokens: list[str], prog: str | None = None) -> str:
    """A call as the agent writes it: how it runs the tool (`prog`; default: the tool's name), then its tokens (a lone
    `|` is a pipe, not quoted)."""
    return " ".join([prog or tree.name, *(t if t == "|" else shlex.quote(t) for t in tokens)])


async def fit(tree: Tree, kept: Store, result: Result, ask: Asked, context: Context | None) -> Result:
    """`result` within its budget (the call's, else the tree's), in the form asked for: cut at a whole unit with a
    note, the whole kept in `kept` for the next parts (when it cannot be, the note says why). `result.output` holds
    the answer's text; passed-through content items are its text items (others stay as they are)."""
    budget = ask.budget or tree.settings.budget
    text = result.output
    if result.content is not None:
        text = "\n".join(c["text"] for c in result.content if c.get("type") == "text")
    if fits(text, min(budget, AUTO)) and not ask.form and not result.omitted:
        return result  # small: as it came (the common case, no parsing)
    try:
        body = shape(text, ask.form, result.value if result.content is None else None)
        return await _fitted(tree, kept, result, ask, context, text, body)
    except RecursionError:  # JSON nested deeper than Python renders, measures or keeps it: its text, in lines
        return await _fitted(tree, kept, result, ask, context, text, Body("lines", text.split("\n")))


async def _fitted(
    tree: Tree, kept: Store, result: Result, ask: Asked, context: Context | None, text: str, body: Body
) -> Result:
    """`fit` of `result`, whose answer `text` is `body`."""
    budget = ask.budget or tree.settings.budget
    formed = body.form != "json"
    if fits(text, budget) and not formed and not result.omitted:
        return result
    size = 0
    if sum(body.sizes) <= 8 * budget:  # it may fit whole in its form (TOON can be half of compact JSON)
        whole = body.render(0, len(body.units))
        if fits(whole, budget) and not result.omitted:
            note = f"\n[{_formed(body.form)}]" if formed and not ask.form else ""  # compact JSON: no note
            return _answer(result, whole + note, None)
        size = about(whole)
    body = finer(body, room(budget))
    n, end = len(body.units), end_of(body, 0, budget)
    if not size:  # far over: the first part's size, in proportion to its share of the characters
        counted = about(body.render(0, end), body.count(0, end))  # counted while its end was sought
        size = counted * sum(body.sizes) // max(sum(body.sizes[:end]), 1)
    key, why = None, ""
    if end < n:
        try:
            key = await kept.put(Entry(body, ask.tokens, owner(context), size))
        except NotKept as exc:
            why = str(exc)
    return _part(tree, result, body, 0, end, budget, ask, key, size, formed, why)


async def more(tree: Tree, kept: Store, ask: Asked, context: Context | None) -> Result:
    """The part of a kept answer that `--more ID:FROM` asks for, within the call's budget; NotFound when it is not
    kept here (expired, another session's, or another replica's without a shared store), HandlerError when the
    store cannot be reached, each saying which call to run again."""
    assert ask.more is not None
    key, start = ask.more
    again = call_text(tree, [*ask.options(), *ask.tokens], ask.prog) if ask.tokens else ""
    rerun = f"run the call again (`{again}`) and follow its note" if again else "run the call again"
    try:
        entry = await kept.get(key, owner(context))
    except NotKept as exc:
        raise HandlerError(f"kept answer `{key}` cannot be read: {exc}. To read on, {rerun}.") from None
    body = _revived(entry.body) if entry is not None else None
    if entry is None or body is None:
        raise NotFound(
            f"no kept answer `{key}` here: answers are kept {SECONDS / 60:g} minutes for the session that got them, "
            f"and this one expired, belongs to another session, or was kept by another replica of a --stateless "
            f"server (replicas share them through `--answers-store redis://HOST:PORT/DB`). To read on, {rerun}; "
            f"narrower calls need no next part."
        )
    n = len(body.units)
    if start > n:
        raise UsageError(f"kept answer `{key}` has {n:,} {_units(body)}; --more takes {key}:1 to {key}:{n}.")
    budget = ask.budget or tree.settings.budget
    ask.tokens = entry.call
    end = end_of(body, start - 1, budget)
    result = Result(ok=True, path=tree.name)
    return _part(tree, result, body, start - 1, end, budget, ask, key, entry.tokens, body.form != "json")


def _revived(body: Any) -> Body | None:
    """A kept body as a Body (one read back from a file or Redis is its JSON data; None if that is not one)."""
    if isinstance(body, Body):
        return body
    try:
        return Body(**body)
    except TypeError:
        return None


def _units(body: Body) -> str:
    return {"lines": "lines", "chars": "pieces", "json": "items"}[body.kind]


def _part(
    tree: Tree,
    result: Result,
    body: Body,
    start: int,
    end: int,
    budget: int,
    ask: Asked,
    key: str | None,
    size: int,
    formed: bool,
    why: str = "",
) -> Result:
    """The answer showing units start..end of `body`, with its note; `key`: the id of the kept answer (None: not
    kept, `why`)."""
    n, shown, nxt = len(body.units), body.describe(start, end), None
    lost = f"; the command wrote {result.omitted:,} more characters, which were not kept" if result.omitted else ""
    if end >= n:
        note = (
            f"whole answer, about {size:,} tokens{lost}." if start == 0 and not ask.more else f"{shown}: the end{lost}."
        )
    elif key is None:
        note = (
            f"cut to the {budget:,}-token budget: {shown} shown, about {size:,} tokens in all{lost}; the rest "
            f"could not be kept for next parts: {why}. {LESS}"
        )
    else:
        nxt = call_text(tree, [*ask.options(), "--more", f"{key}:{end + 1}", *ask.tokens], ask.prog)
        note = (
            f"cut to the {budget:,}-token budget: {shown} shown, about {size:,} tokens in all{lost}. Next part: "
            f"`{nxt}`. Or {LESS[0].lower()}{LESS[1:]}"
        )
    if formed and not ask.form:
        note += f" {_formed(body.form)}"
    part = {"shown": shown, "of": size, "next": nxt, "id": key}
    return _answer(result, body.render(start, end).rstrip("\n") + f"\n[{note}]", part)


def _formed(form: str) -> str:
    return f"{form.upper()} form of the JSON answer; `--format json` gives JSON."


def _answer(result: Result, text: str, part: dict[str, Any] | None) -> Result:
    """`result` answering `text`: as its output and, for passed-through content, its one text item (other items
    kept); its structured data left out, as the text no longer is all of it."""
    result.output, result.part = text, part
    result.data = None
    if result.content is not None:
        others = [c for c in result.content if c.get("type") != "text"]
        result.content = [{"type": "text", "text": text}, *others]
    return result


def room(budget: int) -> int:
    """Characters that surely fit `budget` tokens beside a note (2.5 a token): a document's part, a piece of a line."""
    return (budget - NOTE) * 5 // 2


def about(text: str, count: int | None = None) -> int:
    """About how many tokens `text` is, for a note (estimated in full up to a megabyte; `count`: its tokens, known)."""
    if len(text) > 1_000_000:
        return len(text) // CHARS_PER_TOKEN
    return tokens(text) if count is None else count
