"""Budgets and next parts in-process (`answers.py`), through its public functions: the reserved options a call
leads with (`asked`), compact forms (`encode`, `table`), an answer cut to its budget with a note and read on from the
kept answer (`fit`, `more`), and what is kept, for whom and for how long (`kept.Memory`, `kept.Files`)."""

import json
import os
import re
import time

import anyio
import pytest

from mcp_cli.engine import answers as a
from mcp_cli.engine.answers import Asked, asked
from mcp_cli.engine.kept import Entry, Files, Memory, NotKept, Store
from mcp_cli.entities import Context
from mcp_cli.errors import HandlerError, NotFound, UsageError
from mcp_cli.result import Result, fits, tokens
from mcp_cli.tree import Group, Settings, Tree

BUDGET = 600
TREE = Tree(Group("t"), Settings(budget=BUDGET))
LINES = [f"line {i:04} " + "w" * 40 for i in range(300)]
NOTE = re.compile(r"\n\[([^\n]*)\]$")


def none(_rest):
    return set()


def ask(*tokens: str, flags=none) -> Asked:
    return asked(list(tokens), flags)


def fit(tree: Tree, kept: Store, result: Result, asked_: Asked, context) -> Result:
    return anyio.run(a.fit, tree, kept, result, asked_, context)


def more(tree: Tree, kept: Store, asked_: Asked, context) -> Result:
    return anyio.run(a.more, tree, kept, asked_, context)


def put(kept: Store, entry_: Entry) -> str | None:
    """The new answer's id, None when it is not kept."""
    try:
        return anyio.run(kept.put, entry_)
    except NotKept:
        return None


def get(kept: Store, key: str, owner: str | None) -> Entry | None:
    return anyio.run(kept.get, key, owner)


def cut(result: Result) -> tuple[str, str]:
    """An answer's text and its note."""
    found = NOTE.search(result.output)
    assert found, result.output[-300:]
    return result.output[: found.start()], found.group(1)


def read_all(result: Result, kept: Store, budget: int = BUDGET, context=None, tree=TREE) -> list[tuple[str, str]]:
    """Every part of an answer, following its notes' next calls."""
    parts = [cut(result)]
    while result.part and result.part["next"]:
        key = result.part["id"]
        start = result.part["next"].split(f"{key}:")[1].split()[0]
        result = more(tree, kept, ask("--budget", str(budget), "--more", f"{key}:{start}", "x"), context)
        parts.append(cut(result))
    return parts


# the reserved options


@pytest.mark.parametrize(
    ("tokens", "own", "rest", "budget", "form", "more_"),
    [
        (["--budget", "900", "a", "b"], set(), ["a", "b"], 900, None, None),
        (["--budget=1,000", "--format", "toon", "a"], set(), ["a"], 1000, "toon", None),
        (["--format=table", "--budget", "2_000", "a"], set(), ["a"], 2000, "table", None),
        (["a", "--budget", "900", "b"], set(), ["a", "b"], 900, None, None),  # after the path: ours
        (["a", "b", "--budget=900", "--more", "k1:3"], set(), ["a", "b"], 900, None, ("k1", 3)),
        (["a", "--budget", "900"], {"--budget"}, ["a", "--budget", "900"], None, None, None),  # the command's own
        (["--budget", "900", "a", "--budget", "7"], {"--budget"}, ["a", "--budget", "7"], 900, None, None),
        (["a", "--", "--budget", "900"], set(), ["a", "--", "--budget", "900"], None, None, None),
        (["a", "|", "b", "--budget", "900"], set(), ["a", "|", "b", "--budget", "900"], None, None, None),
        (["a", "--budget", "900"], None, ["a", "--budget", "900"], None, None, None),  # options not known
        (["--more", "abc:1"], set(), [], None, None, ("abc", 1)),
        (["--budgets", "900"], set(), ["--budgets", "900"], None, None, None),
        (["a", "-budget", "900"], set(), ["a", "-budget", "900"], None, None, None),
        (["--budget", "500"], set(), [], 500, None, None),
    ],
)
def test_reserved_options_before_the_path_are_ours_and_after_it_unless_the_command_has_them(
    tokens, own, rest, budget, form, more_
):
    got = asked(tokens, lambda r: own)
    assert (got.tokens, got.budget, got.form, got.more) == (rest, budget, form, more_)


def test_the_command_s_options_are_asked_for_the_call_without_the_options_before_it():
    seen = []
    asked(["--budget", "900", "a", "b"], lambda r: seen.append(list(r)) or set())
    assert seen == [["a", "b"]]


TAKES_BUDGET = "--budget takes a number of tokens, at least 500"
TAKES_MORE = "--more takes ID:FROM as an answer's note gives it (`--more k7Qx2m:41`)"
DIGITS_41 = "give a whole number in the digits 0-9, e.g. 41."


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        (["--budget", "499", "a"], "--budget takes a number of tokens, at least 500, not '499'."),
        (["--budget", "lots"], f"{TAKES_BUDGET}, not 'lots'; give a whole number in the digits 0-9, e.g. 8000."),
        (["--budget", "-900"], f"{TAKES_BUDGET}, not '-900'."),
        (["--budget", "²"], f"{TAKES_BUDGET}, not '²'; give a whole number in the digits 0-9, e.g. 8000."),
        (["--budget", "١٢٠٠"], f"{TAKES_BUDGET}, not '١٢٠٠'; write it in the digits 0-9: 1200."),
        (
            ["--budget", "9" * 5000],
            f"{TAKES_BUDGET}, not '{'9' * 24}'... (5,000 characters); it has 5,000 digits, more "
            "than the 4,300 a number may have; give a smaller one.",
        ),
        (["--format", "xml"], "--format takes one of json, toon, table, not 'xml'."),
        (["--more", "k7"], f"{TAKES_MORE}, not 'k7'."),
        (["--more", ":3"], f"{TAKES_MORE}, not ':3'."),
        (["--more", "k:0"], f"{TAKES_MORE}; FROM counts from 1, not '0'."),
        (["--more", "k:x"], f"{TAKES_MORE}; FROM counts from 1, not 'x'; {DIGITS_41}"),
        (["--more", "k:²"], f"{TAKES_MORE}; FROM counts from 1, not '²'; {DIGITS_41}"),
        (
            ["--more", "k:" + "1" * 4301],
            f"{TAKES_MORE}; FROM counts from 1, not '{'1' * 24}'... (4,301 characters); it "
            "has 4,301 digits, more than the 4,300 a number may have; give a smaller one.",
        ),
        (["--budget"], "--budget needs a value."),
        (["a", "--format"], "--format needs a value."),
    ],
)
def test_a_bad_reserved_option_is_a_usage_error(tokens, message):  # never a ValueError: no number is read but by
    # `types.whole`, which refuses other scripts' digits (`²` is no digit to int()) and numbers Python will not read
    with pytest.raises(UsageError) as caught:
        asked(tokens, none)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("tokens", "taken"),
    [
        (["--budget", "900", "a", "b"], 2),
        (["--budget=900", "--format", "toon", "a"], 3),
        (["--more=k:1", "--budget=900"], 2),
        (["a", "--budget", "900"], 0),
        (["--budget"], 1),  # a value missing: no more than there are
        ([], 0),
    ],
)
def test_leading_counts_the_tokens_the_reserved_options_in_front_take(tokens, taken):
    assert a.leading(tokens) == taken


def test_the_options_given_are_written_again_for_a_next_part():
    assert ask("--format", "toon", "--budget", "900", "a").options() == ["--budget", "900", "--format", "toon"]
    assert ask("--format", "toon", "a").options() == ["--format", "toon"]
    assert ask("a").options() == []


# compact forms


ROWS = [{"a": 1, "b": "x|y\nz"}, {"a": None, "b": True}]


@pytest.mark.parametrize(
    ("value", "is_tabular"),
    [
        (ROWS, True),
        ([{"a": 1}, {"a": 2}], True),
        ([{"a": 1}], False),  # one row is no table
        ([], False),
        ([{"a": 1}, {"b": 1}], False),
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),  # the same keys in another order
        ([{"a": 1}, {"a": [1]}], False),
        ([{"a": {"b": 1}}, {"a": 1}], False),
        ([{"a": 1}, 2], False),
        ({"a": 1}, False),
    ],
)
def test_a_table_is_two_or_more_objects_with_the_same_keys_and_scalar_values(value, is_tabular):
    assert a.tabular(value) is is_tabular
    assert a.compactable(value) is is_tabular
    assert a.compactable({"k": 1, "rows": value}) is is_tabular


def test_table_form():
    assert a.encode(ROWS, "table") == "a | b\n1 | x\\|y\\nz\nnull | true"
    assert (
        a.encode({"rows": ROWS, "n": 2, "é": "ü"}, "table")
        == 'rows (2):\na | b\n1 | x\\|y\\nz\nnull | true\nn: 2\né: "ü"'
    )
    assert a.encode([1, "é"], "table") == '[\n 1,\n "é"\n]'


def test_json_and_toon_forms():
    assert a.encode({"é": [1, 2]}, "json") == '{"é": [1, 2]}'
    assert a.encode({"é": [1]}, "json", 2) == '{\n  "é": [\n    1\n  ]\n}'
    assert a.encode(ROWS[:1] * 2, "toon") == '[2]{a,b}:\n  1,"x|y\\nz"\n  1,"x|y\\nz"'


# answers that fit


def test_a_small_answer_is_given_as_it_came():
    result = Result(ok=True, output='[{"a": 1}, {"a": 2}]', data={"k": 1})
    assert fit(TREE, Memory(), result, ask("x"), None) is result
    assert (result.output, result.data, result.part) == ('[{"a": 1}, {"a": 2}]', {"k": 1}, None)


def test_an_answer_within_the_budget_is_given_as_it_came_unless_big_and_tabular():
    tree = Tree(Group("t"), Settings(budget=20_000))
    plain = json.dumps([{"k": i, "v": [i]} for i in range(400)])  # no table: as it came, however big
    result = Result(ok=True, output=plain, data={"x": 1})
    assert tokens(plain) > 1_000 and fit(tree, Memory(), result, ask("x"), None).output == plain
    rows = [{"id": i, "name": f"n{i}"} for i in range(300)]
    for value in (rows, {"total": 300, "rows": rows}):
        result = Result(ok=True, output=json.dumps(value), data={"x": 1})
        got = fit(tree, Memory(), result, ask("x"), None)
        assert got.output == a.encode(value, "toon") + "\n[TOON form of the JSON answer; `--format json` gives JSON.]"
        assert got.data is None and got.part is None
    small = json.dumps(rows[:40])  # tabular, under 1,000 tokens: as it came
    assert tokens(small) < 1_000 and fit(tree, Memory(), Result(ok=True, output=small), ask("x"), None).output == small
    asked_json = fit(tree, Memory(), Result(ok=True, output=json.dumps(rows)), ask("--format", "json", "x"), None)
    assert asked_json.output == json.dumps(rows)


def test_a_form_asked_for_is_given_without_a_note():
    rows = json.dumps([{"id": 1, "n": "a"}, {"id": 2, "n": "b"}])
    result = fit(TREE, Memory(), Result(ok=True, output=rows, data=[1]), ask("--format", "table", "x"), None)
    assert (result.output, result.data) == ("id | n\n1 | a\n2 | b", None)
    members = {f"k{i}": "v" * 50 for i in range(60)}  # an object without arrays: its members as lines
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(members)), ask("--format", "table", "x"), None)
    text, note = cut(result)
    assert text.split("\n")[:2] == ["k0: " + json.dumps("v" * 50), "k1: " + json.dumps("v" * 50)]
    assert note.startswith(f"cut to the 600-token budget: lines 1-{len(text.splitlines())} of 60 shown")
    result = fit(TREE, Memory(), Result(ok=True, output="not json"), ask("--format", "toon", "x"), None)
    assert result.output == "not json"


# answers cut to their budget


def assert_most_that_fit(parts: list[str], units: list[str], join: str) -> None:
    """Each part is the most units that fit the budget beside the note, and the parts are the whole."""
    at = 0
    for part in parts:
        n = next(n for n in range(1, len(units) - at + 1) if join.join(units[at : at + n]) == part)
        assert fits(part, BUDGET - a.NOTE)
        if at + n < len(units):
            assert not fits(join.join(units[at : at + n + 1]), BUDGET - a.NOTE)
        at += n
    assert at == len(units)


def test_a_long_text_is_cut_at_whole_lines_and_read_on_from_the_kept_answer():
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES), data={"x": 1}), ask("x", "a b"), None)
    text, note = cut(result)
    n = len(text.split("\n"))
    key = result.part["id"]
    assert re.fullmatch(r"[A-Za-z0-9]{8}", key)
    size = a.about("\n".join(LINES[:n])) * sum(len(x) + 1 for x in LINES) // sum(len(x) + 1 for x in LINES[:n])
    assert note == (
        f"cut to the 600-token budget: lines 1-{n} of 300 shown, about {size:,} tokens in all. Next part: "
        f"`t --more {key}:{n + 1} x 'a b'`. Or ask for less: a narrower call, `| jq FILTER`, `| head N`, or a "
        "bigger `--budget N`."
    )
    assert result.part == {
        "shown": f"lines 1-{n} of 300",
        "of": size,
        "next": f"t --more {key}:{n + 1} x 'a b'",
        "id": key,
    }
    assert result.data is None
    parts = read_all(result, kept)
    assert_most_that_fit([p for p, _ in parts], LINES, "\n")
    last = len(LINES) - len(parts[-1][0].split("\n")) + 1
    assert parts[-1][1] == f"lines {last}-300 of 300: the end."
    assert parts[1][1].startswith(f"cut to the 600-token budget: lines {n + 1}-")
    assert f"about {size:,} tokens in all. Next part: `t --budget 600 --more {key}:" in parts[1][1]


def test_a_next_part_from_anywhere_and_the_last_one():
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("x"), None)
    key = result.part["id"]
    last = more(TREE, kept, ask("--more", f"{key}:300"), None)
    assert last.output == LINES[-1] + "\n[lines 300-300 of 300: the end.]"
    assert last.part == {"shown": "lines 300-300 of 300", "of": result.part["of"], "next": None, "id": key}
    assert last.ok and last.path == "t"
    middle = more(TREE, kept, ask("--more", f"{key}:2"), None)
    assert cut(middle)[0].split("\n")[0] == LINES[1]
    with pytest.raises(UsageError) as caught:
        more(TREE, kept, ask("--more", f"{key}:301"), None)
    assert str(caught.value) == f"kept answer `{key}` has 300 lines; --more takes {key}:1 to {key}:300."


def test_json_arrays_are_cut_at_whole_items_in_their_own_indentation():
    items = [{"id": i, "name": f"person-{i:03}", "about": "x " * 20} for i in range(200)]
    for indent in (None, 4):
        kept = Memory()
        out = json.dumps(items, indent=indent)
        result = fit(TREE, kept, Result(ok=True, output=out), ask("--format", "json", "x"), None)
        parts = read_all(result, kept)
        got, at = [], 0
        for text, note in parts:
            value = json.loads(text)
            assert text == json.dumps(value, indent=indent)
            assert f"items {at + 1}-{at + len(value)} of 200" in note
            assert fits(text, BUDGET - a.NOTE)
            if at + len(value) < len(items):
                assert not fits(json.dumps(items[at : at + len(value) + 1], indent=indent), BUDGET - a.NOTE)
            got += value
            at += len(value)
        assert got == items


def test_json_written_without_indenting_its_lines_is_cut_in_two_spaces():
    out = "[\n" + ",\n".join(json.dumps({"k": i, "v": "y" * 60}) for i in range(100)) + "\n]"
    result = fit(TREE, Memory(), Result(ok=True, output=out), ask("--format", "json", "x"), None)
    text, _ = cut(result)
    assert text.startswith('[\n  {\n    "k": 0,')


def test_an_object_s_arrays_are_cut_and_its_other_members_kept_in_every_part():
    people = [{"name": f"person-{i:03}", "type": "person"} for i in range(120)]
    links = [{"from": f"person-{i:03}", "to": f"person-{i + 1:03}"} for i in range(40)]
    value = {"entities": people, "total": 160, "relations": links, "none": []}
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(value)), ask("--format", "json", "x"), None)
    parts = read_all(result, kept)
    first = json.loads(parts[0][0])
    n = len(first["entities"])
    assert list(first) == ["entities", "total", "none"] and first["total"] == 160 and first["none"] == []
    assert f": items 1-{n} of 160 (entities 1-{n} of 120; relations none of 40) shown," in parts[0][1]
    seen = {"entities": [], "relations": []}
    for text, _ in parts:
        part = json.loads(text)
        assert part["total"] == 160
        for k in seen:
            seen[k] += part.get(k, [])
    assert seen == {"entities": people, "relations": links}
    middle = next(note for text, note in parts if "entities" in json.loads(text) and "relations" in json.loads(text))
    assert re.search(r": items \d+-\d+ of 160 \(entities \d+-120 of 120; relations 1-\d+ of 40\) shown", middle)


def test_an_answer_in_long_lines_is_cut_in_pieces_of_characters():
    text = ("word " * 20_000).strip()  # one line of 99,999 characters
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=text), ask("x"), None)
    parts = read_all(result, kept)
    pieces = [p for p, _ in parts]
    assert "".join(pieces) == text
    step = (BUDGET - a.NOTE) * 5 // 2 // 8
    assert step == a.room(BUDGET) // a.PIECES == 125
    assert all(len(p) % step == 0 for p in pieces[:-1])
    assert_most_that_fit(pieces, [text[i : i + step] for i in range(0, len(text), step)], "")
    assert parts[0][1].startswith(f"cut to the 600-token budget: characters 1-{len(pieces[0]):,} of 99,999 shown")
    start = len(text) - len(pieces[-1]) + 1
    assert parts[-1][1] == f"characters {start:,}-99,999 of 99,999: the end."
    with pytest.raises(UsageError, match=r" has \d+ pieces; --more takes "):
        more(TREE, kept, ask("--more", f"{result.part['id']}:100000"), None)


def test_pieces_are_never_under_64_characters():
    tree = Tree(Group("t"), Settings(budget=250))  # room 125: pieces of 64, not 15
    text = "z" * 5_000
    result = fit(tree, Memory(), Result(ok=True, output=text), Asked(["x"]), None)
    part, _ = cut(result)
    assert len(part) % 64 == 0 and fits(part, 50) and not fits(text[: len(part) + 64], 50)


def test_json_with_items_too_big_for_a_part_is_cut_as_the_lines_of_its_rendering():
    items = [{"id": i, "text": "v " * 300} for i in range(12)]  # each item over half of the room
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(items)), ask("--format", "json", "x"), None)
    parts = read_all(result, kept)
    lines = json.dumps(items, indent=1).split("\n")
    assert_most_that_fit([p for p, _ in parts], lines, "\n")
    assert re.match(r"cut to the 600-token budget: lines 1-\d+ of 50 shown", parts[0][1])


def test_a_compact_form_cut_to_its_budget_says_so():
    rows = [{"id": i, "name": f"person-{i:03}"} for i in range(400)]
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(rows)), ask("x"), None)
    text, note = cut(result)
    n = len(text.split("\n")) - 1
    assert text == a.encode(rows[:n], "toon")
    assert note.endswith("bigger `--budget N`. TOON form of the JSON answer; `--format json` gives JSON.")
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(rows)), ask("--format", "table", "x"), None)
    text, note = cut(result)
    assert text == a.encode(rows[: len(text.split("\n")) - 1], "table")
    assert note.endswith("bigger `--budget N`.")
    key = result.part["id"]
    nxt = more(TREE, kept, ask("--format", "table", "--more", f"{key}:2", "x"), None)
    assert cut(nxt)[0].startswith("id | name\n1 | person-001\n")
    assert f"Next part: `t --format table --more {key}:" in cut(nxt)[1]


def test_a_budget_asked_for_is_the_answer_s_and_goes_into_its_next_call():
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("--budget", "1200", "x"), None)
    text, note = cut(result)
    assert note.startswith("cut to the 1,200-token budget:")
    assert fits(text, 1_000) and not fits(text, 600)
    assert f"`t --budget 1200 --more {result.part['id']}:" in note
    whole = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("--budget", "50000", "x"), None)
    assert whole.output == "\n".join(LINES) and whole.part is None


def test_what_the_command_dropped_is_said_in_every_note():
    text = "\n".join(LINES[:5])
    result = fit(TREE, Memory(), Result(ok=True, output=text, omitted=12_345), ask("x"), None)
    assert result.output == (
        f"{text}\n[whole answer, about {a.about(text):,} tokens; the command wrote 12,345 more characters, which "
        "were not kept.]"
    )
    assert result.part == {"shown": "lines 1-5 of 5", "of": a.about(text), "next": None, "id": None}
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES), omitted=7), ask("x"), None)
    assert (
        "about" in cut(result)[1]
        and "; the command wrote 7 more characters, which were not kept. Next" in cut(result)[1]
    )
    rows = json.dumps([{"id": i} for i in range(500)])
    formed = fit(
        Tree(Group("t"), Settings(budget=20_000)), Memory(), Result(ok=True, output=rows, omitted=1), ask(), None
    )
    assert cut(formed)[1].startswith("whole answer, about ") and cut(formed)[1].endswith(
        "were not kept. TOON form of the JSON answer; `--format json` gives JSON."
    )


def test_an_answer_too_big_to_keep_is_cut_without_a_next_part():
    result = fit(TREE, Memory(total=1_000), Result(ok=True, output="\n".join(LINES)), ask("x"), None)
    text, note = cut(result)
    n = len(text.split("\n"))
    assert re.fullmatch(
        rf"cut to the 600-token budget: lines 1-{n} of 300 shown, about [\d,]+ tokens in all; the rest could not be "
        r"kept for next parts: it is too big to keep \(over 1,000 characters\)\. Ask for less: a narrower call, "
        r"`\| jq FILTER`, `\| head N`, or a bigger `--budget N`\.",
        note,
    )
    assert result.part["next"] is None and result.part["id"] is None


def test_the_size_of_an_answer_far_over_its_budget_is_estimated_from_its_first_part():
    lines = [f"{i} " + "q" * 60 for i in range(4_000)]  # over 8 times the budget
    result = fit(TREE, Memory(), Result(ok=True, output="\n".join(lines)), ask("x"), None)
    text, _ = cut(result)
    n = len(text.split("\n"))
    sizes = [len(x) + 1 for x in lines]
    assert result.part["of"] == a.about("\n".join(lines[:n])) * sum(sizes) // sum(sizes[:n])


def test_passed_through_content_keeps_its_other_items_and_answers_in_one_text_item():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    content = [
        {"type": "text", "text": "one\ntwo"},
        image,
        {"type": "text", "text": "\n".join(LINES)},
    ]
    result = fit(TREE, Memory(), Result(ok=True, output="ignored", content=content), ask("x"), None)
    text, _ = cut(result)
    assert result.content == [{"type": "text", "text": result.output}, image]
    assert text.split("\n")[:3] == ["one", "two", LINES[0]]
    small = [{"type": "text", "text": "hi"}, image]
    result = Result(ok=True, output="x" * 50_000, content=small)
    assert fit(TREE, Memory(), result, ask("x"), None).content == small  # its text items fit: as it came


# kept answers


def test_a_kept_answer_is_read_by_its_session_only():
    kept, mine, other = Memory(), Context(), Context()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("x", "y z"), mine)
    key = result.part["id"]
    assert cut(more(TREE, kept, ask("--more", f"{key}:5"), mine))[0].startswith(LINES[4])
    with pytest.raises(NotFound) as caught:
        more(TREE, kept, ask("--more", f"{key}:5", "x", "y z"), other)
    assert str(caught.value) == (
        f"no kept answer `{key}` here: answers are kept 15 minutes for the session that got them, and this one "
        "expired, belongs to another session, or was kept by another replica of a --stateless server (replicas share "
        "them through `--answers-store redis://HOST:PORT/DB`). To read on, "
        "run the call again (`t x 'y z'`) and follow its note; narrower calls need no next part."
    )
    with pytest.raises(NotFound, match=r"run the call again \(`t x \| head 5`\) and follow its note"):
        more(TREE, kept, ask("--more", f"{key}:5", "x", "|", "head", "5"), other)
    with pytest.raises(NotFound, match=r"To read on, run the call again; narrower"):
        more(TREE, kept, ask("--more", f"{key}:5"), None)
    shared = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("x"), Context(lasting=False))
    assert more(TREE, kept, ask("--more", f"{shared.part['id']}:2"), other).output.startswith(LINES[1])


def entry(size: int, owner=None, at=None) -> Entry:
    body = a.shape("x" * (size - 1), None)  # one line: its size and a newline
    return Entry(body, ["c"], owner, 1) if at is None else Entry(body, ["c"], owner, 1, at)


def test_kept_answers_expire():
    kept = Memory()
    fresh, old = put(kept, entry(10, at=time.time() - 890)), put(kept, entry(10, at=time.time() - 910))
    assert get(kept, fresh, None) is not None and get(kept, old, None) is None
    short = Memory(seconds=5)
    assert get(short, put(short, entry(10, at=time.time() - 6)), None) is None
    assert get(kept, "nosuch", None) is None


def test_the_least_recently_read_answers_go_first_when_too_many_are_kept():
    kept = Memory(total=30)
    first, second = put(kept, entry(10)), put(kept, entry(10))
    assert get(kept, first, None)  # read: now the most recent
    third = put(kept, entry(10))  # 30 characters: all kept
    assert put(kept, entry(31)) is None  # too big to keep at all
    fourth = put(kept, entry(10))
    assert get(kept, second, None) is None
    assert all(get(kept, k, None) for k in (first, third, fourth))


def test_a_process_keeps_64_million_characters_and_an_answer_at_most_8_million():
    kept = Memory()
    assert put(kept, entry(8_000_001)) is None
    keys = [put(kept, entry(8_000_000)) for _ in range(7)] + [put(kept, entry(7_999_999))]
    keys += [put(kept, entry(1))]  # 64,000,000 in all: every one kept
    keys += [put(kept, entry(1))]
    assert get(kept, keys[0], None) is None and all(get(kept, k, None) for k in keys[1:])


def test_answers_kept_in_a_folder_are_read_by_later_processes(tmp_path):
    folder = tmp_path / "kept"
    kept = Files(folder)
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), ask("x"), None)
    key = result.part["id"]
    path = folder / f"{key}.json"
    assert path.stat().st_mode & 0o777 == 0o600
    later = Files(folder)  # another process
    got = more(TREE, later, ask("--more", f"{key}:300"), None)
    assert got.output == LINES[-1] + "\n[lines 300-300 of 300: the end.]"
    assert get(later, key, "someone") is not None  # kept for no session: whoever has its id
    assert get(Files(folder, seconds=0.0), key, None) is None


def test_a_folder_s_expired_answers_go_when_a_new_one_comes(tmp_path):
    kept = Files(tmp_path)
    old, recent = tmp_path / "old.json", tmp_path / "recent.json"
    old.write_text("{}")
    recent.write_text("{}")
    os.utime(old, (time.time() - 1_000, time.time() - 1_000))
    os.utime(recent, (time.time() - 800, time.time() - 800))
    put(kept, entry(10))
    assert not old.exists() and recent.exists()


def test_what_a_folder_cannot_give_is_not_kept(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "partial.json").write_text('{"body": {"kind": "lines"}}')
    (tmp_path / "x.json").write_text("{}")
    kept = Files(tmp_path)
    assert get(kept, "broken", None) is None and get(kept, "partial", None) is None
    assert get(kept, "../x", None) is None and get(kept, "missing", None) is None
    unwritable = Files(tmp_path / "x.json" / "sub")  # a folder that cannot be made
    assert put(unwritable, entry(10)) is None  # not kept: the note of a cut answer says why
    result = fit(TREE, unwritable, Result(ok=True, output="\n".join(LINES)), ask("x"), None)
    assert result.part["id"] is None and result.part["next"] is None
    assert (
        f"the rest could not be kept for next parts: {tmp_path / 'x.json' / 'sub'} cannot be written ("
        in cut(result)[1]
    )


def test_room_and_about():
    assert a.room(600) == 1000 and a.room(8_000) == 19_500
    assert a.about("abc def") == tokens("abc def")
    assert a.about("x" * 1_000_000) == tokens("x" * 1_000_000)
    assert a.about("ab" * 500_001) == 1_000_002 // 3


def rows_of_tokens(n: int) -> list[dict]:
    """A table whose compact JSON is `n` tokens (987 for 58 rows, then a longer name in the first)."""
    rows = [{"id": i, "name": "n"} for i in range(58)]
    rows[0]["name"] = "n" * (5 * (n - 987) + 1)
    assert tokens(json.dumps(rows)) == n
    return rows


def test_a_table_over_1000_tokens_comes_as_toon():
    tree = Tree(Group("t"), Settings(budget=20_000))
    under, over = json.dumps(rows_of_tokens(1_000)), rows_of_tokens(1_001)
    assert fit(tree, Memory(), Result(ok=True, output=under), ask("x"), None).output == under
    got = fit(tree, Memory(), Result(ok=True, output=json.dumps(over)), ask("x"), None).output
    assert got == a.encode(over, "toon") + "\n[TOON form of the JSON answer; `--format json` gives JSON.]"


def test_the_size_of_a_json_answer_is_estimated_from_its_items_as_written():
    items = [{"id": i, "name": "é" * 30 + "ß" * (i % 7)} for i in range(300)]  # not ASCII: written as it is
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(items)), ask("--format", "json", "x"), None)
    text, _ = cut(result)
    n = len(json.loads(text))
    sizes = [len(json.dumps(item, ensure_ascii=False)) + 1 for item in items]
    assert result.part["of"] == a.about(a.encode(items[:n], "json")) * sum(sizes) // sum(sizes[:n])


@pytest.mark.parametrize(("length", "whole_items"), [(499, True), (500, False)])
def test_json_items_up_to_half_a_part_s_room_stay_whole(length, whole_items):
    room = a.room(BUDGET)  # 1,000 characters: an item of up to 499 (and its separator) is cut at whole items
    items = [{"k": "a" * (length - 9)} for _ in range(20)]
    assert len(json.dumps(items[0])) == length and room == 1_000
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(items)), ask("--format", "json", "x"), None)
    text, note = cut(result)
    assert note.startswith("cut to the 600-token budget: " + ("items" if whole_items else "lines"))
    assert (text == json.dumps(items[: len(json.loads(text))])) if whole_items else text.startswith('[\n {\n  "k": ')


@pytest.mark.parametrize(("length", "whole_lines"), [(999, True), (1_000, False)])
def test_lines_up_to_a_part_s_room_stay_whole(length, whole_lines):
    lines = ["w" * length] * 6
    result = fit(TREE, Memory(), Result(ok=True, output="\n".join(lines)), ask("x"), None)
    text, note = cut(result)
    if whole_lines:
        assert text == lines[0] and note.startswith("cut to the 600-token budget: lines 1-1 of 6 shown")
    else:
        assert note.startswith("cut to the 600-token budget: characters 1-") and len(text) % 125 == 0
        assert "\n".join(lines).startswith(text)


def test_a_part_takes_every_line_that_fits_up_to_4_characters_a_token():
    lines = ["a" * 99] * 40  # 16 lines: 1,599 characters and 399 tokens, the most that fit 400 beside the note
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(lines)), ask("x"), None)
    assert cut(result)[0] == "\n".join(lines[:16])
    assert_most_that_fit([p for p, _ in read_all(result, kept)], lines, "\n")


def test_a_part_has_at_least_one_unit_even_over_its_budget():
    lines = [",".join(["1"] * 450)] * 3  # 899 characters, 899 tokens: no line fits 400
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(lines)), ask("x"), None)
    parts = read_all(result, kept)
    assert [p for p, _ in parts] == lines
    assert parts[2][1] == "lines 3-3 of 3: the end."


def test_a_toon_part_takes_every_row_that_fits():
    rows = [{"id": i, "name": f"person-{i:03}", "team": f"team-{i % 9}"} for i in range(300)]
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(rows)), ask("x"), None)
    parts, at = read_all(result, kept), 0
    for text, note in parts:
        n = len(text.split("\n")) - 1
        assert text == a.encode(rows[at : at + n], "toon") and fits(text, BUDGET - a.NOTE)
        if at + n < len(rows):
            assert not fits(a.encode(rows[at : at + n + 1], "toon"), BUDGET - a.NOTE)
        assert note.endswith(" TOON form of the JSON answer; `--format json` gives JSON.")
        at += n
    assert at == len(rows)


@pytest.mark.parametrize("total", [4_800, 5_000])  # 8 times the budget: the whole rendered and counted, or not
def test_the_size_of_an_answer_up_to_8_times_its_budget_is_counted_whole(total):
    lines = [" ".join("1" * 20)] * 40 + ["w" * 99] * ((total - 1_700) // 100)  # dense, then sparse: an estimate
    lines.append("w" * (total - sum(len(x) + 1 for x in lines) - 1))  # from the first part errs
    sizes = [len(x) + 1 for x in lines]
    assert sum(sizes) == total
    result = fit(TREE, Memory(), Result(ok=True, output="\n".join(lines)), ask("x"), None)
    n = len(cut(result)[0].split("\n"))
    estimate = a.about("\n".join(lines[:n])) * total // sum(sizes[:n])
    assert estimate != a.about("\n".join(lines))
    assert result.part["of"] == (a.about("\n".join(lines)) if total == 4_800 else estimate)


def test_ids_are_eight_letters_or_digits():
    kept = Memory()
    keys = {put(kept, entry(2)) for _ in range(300)}
    assert len(keys) == 300 and all(re.fullmatch(r"[A-Za-z0-9]{8}", k) for k in keys)


def test_a_folder_is_made_where_none_is(tmp_path):
    kept = Files(tmp_path / "a" / "b")
    key = put(kept, entry(10))
    assert (tmp_path / "a" / "b" / f"{key}.json").exists()
    put(kept, entry(10))  # into the folder made before
    assert len(list((tmp_path / "a" / "b").iterdir())) == 2


def test_an_object_s_arrays_of_any_items_are_cut_as_json_with_its_size_estimated_from_them():
    value = {"results": [{"id": i, "tags": ["é", str(i)]} for i in range(400)], "more": [[i] for i in range(50)]}
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(value)), ask("x"), None)  # no table: JSON
    text, note = cut(result)
    n = len(json.loads(text)["results"])
    assert note.endswith(
        f"of 400; more none of 50) shown, about {result.part['of']:,} tokens in all. Next part: "
        f"`t --more {result.part['id']}:{n + 1} x`. Or ask for less: a narrower call, `| jq FILTER`, "
        "`| head N`, or a bigger `--budget N`."
    )
    sizes = [len(json.dumps(item, ensure_ascii=False)) + 1 for k in value for item in value[k]]
    assert result.part["of"] == a.about(text) * sum(sizes) // sum(sizes[:n])


MEMBERS = {f"key-{i}": f"value {i} " + "v" * 40 for i in range(80)}  # an object without arrays


def test_json_without_arrays_is_cut_at_the_lines_it_was_written_in():
    out = json.dumps(MEMBERS, indent=2)
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=out), ask("x"), None)
    assert_most_that_fit([p for p, _ in read_all(result, kept)], out.split("\n"), "\n")


def test_json_without_arrays_in_a_form_asked_for_is_cut_at_the_lines_of_that_form():
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(MEMBERS)), ask("--format", "json", "x"), None)
    text, _ = cut(result)
    assert text.split("\n")[:2] == ["{", f' "key-0": "{MEMBERS["key-0"]}",']  # indented by one
    result = fit(TREE, Memory(), Result(ok=True, output=json.dumps(MEMBERS)), ask("--format", "toon", "x"), None)
    assert cut(result)[0].split("\n")[0] == a.encode(MEMBERS, "toon").split("\n")[0] == f'"key-0": {MEMBERS["key-0"]}'


def test_text_that_is_no_json_stays_text_in_any_form():
    out = "\n".join(LINES)
    for form in ("toon", "table", "json"):
        result = fit(TREE, Memory(), Result(ok=True, output=out), ask("--format", form, "x"), None)
        assert out.startswith(cut(result)[0] + "\n")


def test_a_toon_part_takes_more_rows_than_compact_json_could_hold():
    rows = [{"identifier": i, "name": f"p{i}"} for i in range(300)]  # TOON about a fourth of JSON's characters
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(rows)), ask("x"), None)
    text, _ = cut(result)
    n = len(text.split("\n")) - 1
    assert len(json.dumps(rows[:n])) > 4 * (BUDGET - a.NOTE)  # more rows than compact JSON could hold
    assert text == a.encode(rows[:n], "toon") and not fits(a.encode(rows[: n + 1], "toon"), BUDGET - a.NOTE)


def test_reading_on_past_the_end_names_the_units_there_are():
    items = [{"id": i, "v": "y" * 30} for i in range(200)]
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output=json.dumps(items)), ask("--format", "json", "x"), None)
    key = result.part["id"]
    with pytest.raises(UsageError) as caught:
        more(TREE, kept, ask("--more", f"{key}:201"), None)
    assert str(caught.value) == f"kept answer `{key}` has 200 items; --more takes {key}:1 to {key}:200."


def test_reading_a_kept_answer_from_its_start_to_its_end_says_the_end():
    lines = [f"row {i} ends in X" for i in range(400)]
    kept = Memory()
    result = fit(TREE, kept, Result(ok=True, output="\n".join(lines)), ask("x"), None)
    assert cut(result)[0].endswith(" ends in X")  # a part keeps its last line whole
    whole = more(TREE, kept, ask("--budget", "50000", "--more", f"{result.part['id']}:1"), None)
    assert whole.output == "\n".join(lines) + "\n[lines 1-400 of 400: the end.]"


def test_the_size_of_over_a_million_characters_is_estimated_at_3_a_token():
    assert a.about("x" * 1_000_000) == tokens("x" * 1_000_000) == 250_000
    assert a.about("x" * 1_000_001) == 333_333


@pytest.mark.parametrize("form", [None, "json"])
def test_json_written_wide_over_its_budget_comes_compact_when_that_fits(form):
    wide = "[" + ",   ".join(str(i) for i in range(200)) + "]"  # 2,396 characters: 799 tokens, over 600
    compact = json.dumps(list(range(200)))
    assert not fits(wide, BUDGET) and fits(compact, BUDGET)
    asked_ = ask("--format", form, "x") if form else ask("x")
    result = fit(TREE, Memory(), Result(ok=True, output=wide, data=list(range(200))), asked_, None)
    assert (result.output, result.part, result.data) == (compact, None, None)  # whole, so no note


# how the caller runs the tool (`--prog`): what the notes' calls start with


@pytest.mark.parametrize(
    ("tokens", "rest", "prog"),
    [
        (["--prog", "scripts/pdf.sh", "a", "b"], ["a", "b"], "scripts/pdf.sh"),
        (["--prog=./run it", "--budget", "900", "a"], ["a"], "./run it"),
        (["a", "--prog", "p"], ["a"], "p"),  # after the path: ours, the command has no --prog
        (["a"], ["a"], None),
    ],
)
def test_prog_is_a_reserved_option(tokens, rest, prog):
    got = asked(tokens, none)
    assert (got.tokens, got.prog) == (rest, prog)
    assert "--prog" not in got.options()  # it is written as the call's start, not as an option


def test_a_command_s_own_prog_stays_its_own():
    got = asked(["a", "--prog", "p"], lambda r: {"--prog"})
    assert (got.tokens, got.prog) == (["a", "--prog", "p"], None)


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_prog_is_a_usage_error(value):
    with pytest.raises(UsageError) as caught:
        asked(["--prog", value, "a"], none)
    assert str(caught.value) == "--prog takes how the caller runs the tool (`scripts/pdf.sh`), not ''."


def test_the_notes_calls_start_as_the_caller_runs_the_tool():
    kept, mine = Memory(), Context()
    call = ask("--prog", "scripts/pdf.sh", "--budget", "600", "x", "a b")
    result = fit(TREE, kept, Result(ok=True, output="\n".join(LINES)), call, mine)
    key, n = result.part["id"], len(cut(result)[0].split("\n"))
    assert result.part["next"] == f"scripts/pdf.sh --budget 600 --more {key}:{n + 1} x 'a b'"
    assert f"Next part: `scripts/pdf.sh --budget 600 --more {key}:{n + 1} x 'a b'`." in cut(result)[1]
    nxt = more(TREE, kept, ask("--prog", "scripts/pdf.sh", "--more", f"{key}:{n + 1}", "x", "a b"), mine)
    assert nxt.part["next"].startswith(f"scripts/pdf.sh --more {key}:")
    with pytest.raises(NotFound, match=r"run the call again \(`scripts/pdf\.sh x 'a b'`\) and follow its note"):
        more(TREE, kept, ask("--prog", "scripts/pdf.sh", "--more", f"{key}:2", "x", "a b"), Context())
    assert a.leading(["--prog", "p", "--prog=q", "a"]) == 3


def test_json_with_blank_lines_is_cut_in_the_indentation_of_its_first_written_line():
    items = [{"id": i, "name": f"person-{i:03}"} for i in range(150)]
    out = "[\n\n" + json.dumps(items, indent=4)[2:]  # a blank line after the bracket: the next one's indent counts
    result = fit(TREE, Memory(), Result(ok=True, output=out), ask("--format", "json", "x"), None)
    text, _ = cut(result)
    assert text == json.dumps(json.loads(text), indent=4) and text.startswith('[\n    {\n        "id": 0,')


def test_json_with_nan_and_infinity_is_cut_at_whole_items_as_it_was_written():
    items = [{"id": i, "low": float("-inf"), "v": float("nan"), "about": "x " * 10} for i in range(200)]
    out = json.dumps(items)  # what Python's json writes and reads, though JSON has no such numbers
    kept = Memory()
    parts = read_all(fit(TREE, kept, Result(ok=True, output=out), ask("--format", "json", "x"), None), kept)
    assert len(parts) > 2
    assert [item["id"] for text, _ in parts for item in json.loads(text)] == list(range(200))
    assert all(text == json.dumps(json.loads(text)) and '"v": NaN' in text for text, _ in parts)


def test_json_nested_too_deeply_for_toon_is_answered_as_its_text():
    deep = "[\n" * 600 + "1" + "\n]" * 600  # TOON's encoder refuses over 500 levels or so
    tree = Tree(Group("t"), Settings(budget=20_000))
    result = fit(tree, Memory(), Result(ok=True, output=deep), ask("--format", "toon", "x"), None)
    assert (result.output, result.part) == (deep, None)
    kept = Memory()
    parts = read_all(fit(TREE, kept, Result(ok=True, output=deep), ask("--format", "toon", "x"), None), kept)
    assert "\n".join(text for text, _ in parts) == deep  # over the budget: cut as text, at its lines
    assert parts[0][1].startswith("cut to the 600-token budget: lines 1-")


def renderings(body: a.Body, start: int, budget: int) -> tuple[int, int]:
    """Where `end_of` ends the part from `start`, and how many parts it rendered to find it."""
    seen = []
    render = body.render
    body.render = lambda x, y: seen.append((x, y)) or render(x, y)
    end = a.end_of(body, start, budget)
    body.render = render
    return end, len(seen)


SHAPES = {  # answers of 2,000 to 3,200 units, the tokens of whose lines grow evenly, or jump
    "lines": "\n".join(f"line {i:04} " + "w" * 40 for i in range(3_000)),
    "json": json.dumps([{"id": i, "name": f"person-{i:03}", "about": "x " * 20} for i in range(2_000)]),
    "toon": json.dumps([{"id": i, "name": f"person-{i:03}", "team": f"team-{i % 9}"} for i in range(3_000)]),
    "dense then sparse": "\n".join([",".join("1" * 10)] * 200 + ["w" * 20] * 3_000),
    "sparse then dense": "\n".join(["w" * 20] * 30 + [",".join("1" * 10)] * 3_000),
    "mixed": "\n".join("w" * 40 if i % 7 else ",".join("1" * 20) for i in range(3_000)),
}


@pytest.mark.parametrize("budget", [600, 2_000, 8_000])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_part_s_end_is_found_in_a_few_renderings_not_one_per_halving(shape, budget):
    """Each rendering costs up to 4 characters a token of the budget, rendered and counted: a part's end is found
    where the tokens measured so far put it, in a handful of them (a search halving the units would take 10 or 11)."""
    form = "json" if shape == "json" else None
    for start in (0, 1_000):
        body = a.shape(SHAPES[shape], form)
        end, rendered = renderings(body, start, budget)
        assert fits(body.render(start, end), budget - a.NOTE)  # the most units that fit
        assert end == len(body.units) or not fits(body.render(start, end + 1), budget - a.NOTE)
        assert rendered <= 6, (end - start, rendered)


def test_passed_through_content_is_answered_from_its_text_not_from_a_value_beside_it():
    rows = [{"id": i, "about": "r " * 20} for i in range(100)]
    content = [{"type": "text", "text": json.dumps(rows)}]
    result = Result(ok=True, output="ignored", content=content, value=[{"id": "stale"}])
    text, _ = cut(fit(TREE, Memory(), result, ask("--format", "json", "x"), None))
    assert json.loads(text) == rows[: len(json.loads(text))]


def test_a_kept_answer_that_cannot_be_read_back_is_not_found(tmp_path):
    entry_ = {"body": {"kind": "lines"}, "call": ["x"], "owner": None, "tokens": 1, "at": time.time()}
    (tmp_path / "k1.json").write_text(json.dumps(entry_))  # a body without its units
    with pytest.raises(NotFound, match=r"^no kept answer `k1` here: .* To read on, run the call again \(`t x`\)"):
        more(TREE, Files(tmp_path), ask("--more", "k1:1", "x"), None)


def test_a_store_that_cannot_be_reached_says_so_and_which_call_to_run_again():
    import socket

    from mcp_cli.engine.kept import Redis

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = Redis(f"redis://127.0.0.1:{port}/0", "t")
    with pytest.raises(HandlerError) as caught:
        more(TREE, store, ask("--more", "k1:1", "x", "a b"), None)
    assert re.fullmatch(
        rf"kept answer `k1` cannot be read: the answers store redis://127\.0\.0\.1:{port}/0 cannot be reached "
        r"\(ConnectionError: .*\)\. To read on, run the call again \(`t x 'a b'`\) and follow its note\.",
        str(caught.value),
    )
