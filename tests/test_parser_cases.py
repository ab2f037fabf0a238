"""argv -> values for one command (`parser.py`), in-process: every action and type, defaults, exclusive groups, the
options of a schema-backed command, and the errors, which are raised, never printed."""

import pytest

from mcp_cli.engine.parser import _Parser, build, parse
from mcp_cli.errors import UsageError
from mcp_cli.tree import Command, Exclusive, Param

PARAMS = [
    Param("count", type="integer", flags=["-n", "--count"], default=3),
    Param("ratio", type="number", flags=["--ratio"]),
    Param("mode", flags=["--mode"], choices=["fast", "slow"]),
    Param("tag", flags=["--tag"], action="append"),
    Param("ids", type="integer", flags=["--ids"], action="append"),
    Param("pair", type="integer", flags=["--pair"], nargs=2),
    Param("color", type="boolean", flags=["--color"], action="negatable"),
    Param("verbose", flags=["-v", "--verbose"], action="count"),
    Param("quiet", flags=["--quiet"], action="store_true"),
    Param("keep", flags=["--keep"], action="store_false"),
    Param("source"),
    Param("rest", nargs="..."),
]


def values(tokens: list[str], params=PARAMS, **command) -> dict:
    cmd = Command("c", params=params, **command)
    return parse(build("t c", cmd), cmd, tokens)


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ([], {}),  # `--count` has a default; options without one are absent
        (["-n", "7"], {"count": 7}),
        (["--ratio", "1e3"], {"ratio": 1000}),
        (["--ratio", "0.5"], {"ratio": 0.5}),
        (["--ratio", "-.5"], {"ratio": -0.5}),
        (["-n", "+1_000", "--ratio", " 2 "], {"count": 1000, "ratio": 2}),
        (["-n", "9" * 4300], {"count": int("9" * 4300)}),  # as many digits as Python reads
        (["--mode", "slow"], {"mode": "slow"}),
        (["--tag", "a", "--tag", "b"], {"tag": ["a", "b"]}),
        (["--ids", "1", "--ids", "20"], {"ids": [1, 20]}),  # an append option's items are typed
        (["--pair", "1", "2"], {"pair": [1, 2]}),
        (["--color"], {"color": True}),
        (["--no-color"], {"color": False}),
        (["-v", "-v", "--verbose"], {"verbose": 3}),
        (["--quiet", "--keep"], {"quiet": True, "keep": False}),
        (["file.txt"], {"source": "file.txt"}),  # an optional positional
        (["file.txt", "-x", "--y", "z"], {"source": "file.txt", "rest": ["-x", "--y", "z"]}),
    ],
)
def test_tokens_become_typed_values(tokens, expected):
    assert values(tokens) == {"count": 3, "rest": [], **expected}


@pytest.mark.parametrize(
    ("tokens", "words"),
    [
        (["--count", "x"], "argument -n/--count: invalid integer value: 'x'"),
        (["--ids", "1", "--ids", "two"], "argument --ids: invalid integer value: 'two'"),
        (["--mode", "medium"], "argument --mode: invalid choice: 'medium'"),
        (["--pair", "1"], "argument --pair: expected 2 arguments"),
        (["--ratio", "nan"], "argument --ratio: invalid number value: 'nan'"),
        # every number is read by `types.whole` / `types.number`: digits int() reads (other scripts') or does not
        # (`²`, which isdigit() says is one), and more digits than it will read, are usage errors saying what to give
        (["--count", "x"], "'x'; give a whole number in the digits 0-9, e.g. 12"),
        (["--count", "²"], "argument -n/--count: invalid integer value: '²'; give a whole number in the digits 0-9"),
        (["--count", "١٢"], "argument -n/--count: invalid integer value: '١٢'; write it in the digits 0-9: 12"),
        (["--pair", "1", "٣"], "argument --pair: invalid integer value: '٣'; write it in the digits 0-9: 3"),
        (["--count", "1" * 5000], "(5,000 characters); it has 5,000 digits, more than the 4,300 a number may have"),
        (["--ratio", "٢.٥"], "argument --ratio: invalid number value: '٢.٥'; give a number in the digits 0-9"),
        (["--ratio", "1e400"], "argument --ratio: invalid number value: '1e400'; '1e400' is too large a number"),
        (["--ratio", "1." + "5" * 5000], "it has 5,002 characters, more than the 4,300 a number may have"),
        (["--ratio", "9" * 4301], "it has 4,301 digits, more than the 4,300 a number may have"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_usage_error(tokens, words):
    with pytest.raises(UsageError) as err:
        values(tokens)
    assert words in err.value.message


@pytest.mark.parametrize(("token", "closest"), [("flow", ["slow"]), ("FAST", ["fast"]), ("zzz", [])])
def test_a_wrong_choice_names_every_choice_and_the_closest(token, closest):
    with pytest.raises(UsageError) as err:
        values(["--mode", token])
    assert err.value.message.endswith("(choose from 'fast', 'slow')") and err.value.suggestions == closest


def test_unknown_options_are_named_with_the_closest_flags():
    with pytest.raises(UsageError) as err:
        values(["--colour"])
    assert err.value.message == "unknown option --colour." and err.value.suggestions[0] == "--color"
    with pytest.raises(UsageError) as err:
        values(["--rattio=2"])  # the value after `=` is not part of the name looked up
    assert err.value.message == "unknown option --rattio=2." and err.value.suggestions[0] == "--ratio"


def test_no_abbreviations_and_no_help_option_of_argparse_s_own():
    with pytest.raises(UsageError, match="^unknown option --rat."):
        values(["--rat", "2"])  # argparse would take it for --ratio
    params = [Param("host", flags=["-h", "--host"])]  # `-h` is free for a command's own option
    assert values(["-h", "x"], params) == {"host": "x"}


@pytest.mark.parametrize("token", ["-", "stray"])
def test_a_lone_dash_or_an_extra_word_is_an_unexpected_argument(token):
    params = [Param("source", required=True)]
    with pytest.raises(UsageError) as err:
        values(["a", token], params)
    assert err.value.message == f"unexpected argument {token!r}." and err.value.suggestions == []
    assert values(["-"], params) == {"source": "-"}  # as the only positional, `-` is a value (stdin, by custom)


def test_required_options_and_positionals_are_required_unless_a_schema_carries_them():
    params = [Param("title", flags=["--title"], required=True), Param("state", flags=["--state"], default="open")]
    with pytest.raises(UsageError, match="the following arguments are required: --title"):
        values([], params)
    assert values(["--title", "x"], params) == {"title": "x", "state": "open"}
    # schema-backed: `--json` may carry what is required, and the upstream applies its own defaults
    assert values([], params, schema={"type": "object"}) == {}
    with pytest.raises(UsageError, match="the following arguments are required: FILE"):
        values([], [Param("file", required=True)])


def test_exclusive_options():
    params = [Param("a", flags=["--a"]), Param("b", flags=["--b"]), Param("c", flags=["--c"])]
    loose, strict = [Exclusive(["a", "b"])], [Exclusive(["a", "b"], required=True)]
    assert values([], params, exclusive=loose) == {}
    assert values(["--c", "3"], params, exclusive=loose) == {"c": "3"}
    with pytest.raises(UsageError, match="argument --b: not allowed with argument --a"):
        values(["--a", "1", "--b", "2"], params, exclusive=loose)
    with pytest.raises(UsageError, match="one of the arguments --a --b is required"):
        values(["--c", "3"], params, exclusive=strict)
    assert values(["--b", "2"], params, exclusive=strict) == {"b": "2"}


def test_a_parameter_argparse_refuses_is_named():
    params = [Param("first", flags=["--x"]), Param("second", flags=["--x"])]
    with pytest.raises(ValueError, match="^parameter 'second': argument --x: conflicting option string: --x$"):
        build("t c", Command("c", params=params))


def test_errors_are_raised_never_printed(capsys):
    with pytest.raises(UsageError, match="^boom$"):
        _Parser(prog="t").error("boom")
    with pytest.raises(UsageError, match="^bye$"):
        _Parser(prog="t").exit(2, " bye\n")
    with pytest.raises(UsageError, match="^invalid arguments$"):
        _Parser(prog="t").exit()
    _Parser(prog="t").print_usage()
    assert capsys.readouterr() == ("", "")
