"""A pipeline's data built-ins in-process (`builtins.py`), through `make` and `Flow`: what `head`, `tail`, `jq` and
`save` take from their words, what each makes of JSON and of text, and the one-line errors for wrong words."""

import json

import anyio
import pytest

from mcp_cli.engine.builtins import USAGE, Flow, make
from mcp_cli.engine.jq_pool import POOL
from mcp_cli.errors import HandlerError, UsageError


def run(name: str, args: list[str], flow: Flow, cwd: str | None = None) -> Flow:
    """The stage run as a pipeline runs it (jq in a worker process, the others in a thread), within 60 s."""
    stage = make(name, args, cwd, True)

    async def run_it() -> Flow:
        try:
            return await stage.run(flow, 60.0)
        finally:
            await POOL.aclose()

    return anyio.run(run_it)


def test_usage_names_every_stage_by_its_word():
    assert list(USAGE) == ["jq", "head", "tail", "each", "save"]
    assert all(text.startswith(name + " ") for name, text in USAGE.items())


@pytest.mark.parametrize(
    ("data", "output", "is_json", "text"),
    [
        ({"content": "hi there"}, "hi there", False, "hi there"),  # a wrapper of the text is the text
        ({"content": "[1]"}, "[1]", True, "[1]"),
        ({"content": "other"}, "hi", True, '{"content": "other"}'),
        ({"a": "hi", "b": 2}, "hi", True, '{"a": "hi", "b": 2}'),
        ({"a": "é"}, "x", True, '{"a": "é"}'),  # as written, not escaped
        ([1, 2], "1 2", True, "[1, 2]"),
        (None, '{"k": 1}', True, '{"k": 1}'),
        (None, "plain words", False, "plain words"),
    ],
)
def test_a_command_s_output_flows_as_its_structured_content_or_its_text(data, output, is_json, text):
    flow = Flow.of(data, output)
    assert (flow.is_json, flow.text) == (is_json, text)
    assert flow.value == (json.loads(text) if is_json else None)


def test_a_value_given_is_json_and_text_that_does_not_parse_is_not():
    assert Flow(value=None).is_json and Flow(value=None).text == "null"
    assert Flow(text="[" * 100_000).is_json is False  # too deep for the parser: text, not an error
    flow = Flow(text="{oops")
    assert not flow.is_json and flow.value is None and not flow.is_json


@pytest.mark.parametrize(
    ("flow", "shape"),
    [
        (Flow(text="one\ntwo\n"), "text of 2 lines"),
        (Flow(text=""), "text of 0 lines"),
        (Flow(text="\n".join(["x"] * 1500)), "text of 1,500 lines"),
        (Flow(value=[1]), "a JSON array of 1 item"),
        (Flow(value=[]), "a JSON array of 0 items"),
        (Flow(text=json.dumps(list(range(1200)))), "a JSON array of 1,200 items"),
        (Flow(value={}), "an empty JSON object"),
        (Flow(value=dict.fromkeys("abcdefgh", 1)), "a JSON object of 8 keys (a, b, c, d, e, f, g, h)"),
        (Flow(value=dict.fromkeys("abcdefghi", 1)), "a JSON object of 9 keys (a, b, c, d, e, f, g, h, ...)"),
        (Flow(value="s"), "a JSON string"),
        (Flow(value=None), "a JSON null"),
        (Flow(value=1.5), "a JSON float"),
        (Flow(value=True), "a JSON bool"),
    ],
)
def test_shape_says_what_a_flow_is_in_a_few_words(flow, shape):
    assert flow.shape() == shape


@pytest.mark.parametrize(
    ("args", "count"),
    [([], 10), (["3"], 3), (["-n", "3"], 3), (["-3"], 3), (["-n"], 10), (["0"], 0), (["12"], 12)],
)
def test_head_takes_n_or_dash_n_or_ten(args, count):
    items = list(range(30))
    assert run("head", args, Flow(value=items)).value == items[:count]
    assert run("tail", args, Flow(value=items)).value == (items[-count:] if count else [])


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["x"], "not 'x'; give a whole number in the digits 0-9, e.g. 5."),
        (["-"], "not '-'; give a whole number in the digits 0-9, e.g. 5."),
        (["-x"], "not '-x'; give a whole number in the digits 0-9, e.g. 5."),
        (["2.5"], "not '2.5'; give a whole number in the digits 0-9, e.g. 5."),
        (["3", "4"], "not '3 4'."),
        (["-n", "3", "4"], "not '3 4'."),
        (["-3", "4"], "not '-3 4'."),
        (["-n", "-3"], "not '-3'."),
        (["²"], "not '²'; give a whole number in the digits 0-9, e.g. 5."),  # a digit to isdigit(), not to int()
        (["-n", "١٢"], "not '١٢'; write it in the digits 0-9: 12."),
        (
            ["-" + "7" * 5000],
            f"not '{'7' * 24}'... (5,000 characters); it has 5,000 digits, more than the 4,300 a "
            "number may have; give a smaller one.",
        ),
    ],
)
def test_head_and_tail_refuse_anything_but_one_whole_number(args, why):
    for name in ("head", "tail"):
        with pytest.raises(UsageError) as caught:
            make(name, args, None, True)
        assert caught.value.message == f"`{name}` takes one count, a whole number (`{name} 5`), {why}"


@pytest.mark.parametrize(
    ("text", "head", "tail"),
    [
        ("[1, 2, 3]", [1, 2], [2, 3]),
        ('  [ {"a": [1, 2]} ,\n\t"x" , 3 ]', [{"a": [1, 2]}, "x"], ["x", 3]),
        ("[1]", [1], [1]),
        ("[ ]", [], []),
    ],
)
def test_head_and_tail_take_items_of_a_json_array_given_as_text(text, head, tail):
    flow = run("head", ["2"], Flow(text=text))
    assert flow.is_json and flow.value == head
    assert run("tail", ["2"], Flow(text=text)).value == tail


def test_head_reads_only_the_items_it_needs_of_an_array():
    flow = run("head", ["2"], Flow(text="[1, 2, this is not JSON"))
    assert flow.value == [1, 2]
    assert run("head", ["5"], Flow(text="[1, 2] and then no JSON")).value == [1, 2]  # up to its end


@pytest.mark.parametrize("text", ["[1, 2", "[1,X2]", "[X1]"])
def test_text_that_only_starts_like_an_array_is_lines(text):
    assert run("head", ["5"], Flow(text=text)).text == text
    assert run("tail", ["1"], Flow(text=text)).text == text


def test_head_and_tail_take_lines_of_text_and_of_json_that_is_no_array():
    text = "a\nb\nc\n"
    assert run("head", ["2"], Flow(text=text)).text == "a\nb\n"
    assert run("tail", ["2"], Flow(text=text)).text == "b\nc\n"
    assert run("tail", ["0"], Flow(text=text)).text == ""
    assert run("head", ["1"], Flow(text='{"a": 1,\n"b": 2}')).text == '{"a": 1,\n'
    assert run("tail", ["5"], Flow(value={"k": 1})).text == '{"k": 1}'


def test_head_of_an_array_already_read_takes_its_items():
    flow = Flow(text="[1, 2, 3]")
    assert flow.is_json
    assert run("head", ["2"], flow).value == [1, 2]


@pytest.mark.parametrize(
    ("args", "text", "value", "out"),
    [
        ([".a"], '{"a": {"b": 1}}', {"b": 1}, '{"b": 1}'),
        ([".[]"], '["x", 1]', ["x", 1], '"x"\n1\n'),
        (["-r", ".[]"], '["x", 1]', ["x", 1], "x\n1\n"),
        (["-r", ".a"], '{"a": "x"}', "x", "x\n"),  # raw: text, even for one output
        (["-r", ".a"], '{"a": {"b": "é"}}', {"b": "é"}, '{"b": "é"}\n'),
        ([".[] | select(. > 5)"], "[1, 2]", [], ""),
    ],
)
def test_jq_runs_its_filter_over_the_json(args, text, value, out):
    flow = run("jq", args, Flow(text=text))
    assert flow.value == value
    assert flow.text == out


@pytest.mark.parametrize("args", [[], ["-r"], [".a", ".b"], ["-r", ".a", ".b"]])
def test_jq_takes_one_filter(args):
    with pytest.raises(UsageError, match=r"^`jq` takes one filter \(quote it\)"):
        make("jq", args, None, True)


def test_a_bad_filter_is_refused_before_anything_runs_with_the_first_line_of_jq_s_message():
    with pytest.raises(UsageError) as caught:
        make("jq", [".a |"], None, True)
    assert str(caught.value) == "bad jq filter: syntax error, unexpected end of file at <top-level>, line 1, column 4"


def test_jq_over_text_says_its_input_is_not_json():
    with pytest.raises(UsageError) as caught:
        run("jq", ["."], Flow(text="  hello world\n"))
    assert (
        str(caught.value) == "its input is not JSON (hello world); jq reads JSON: put it after a stage that gives JSON"
    )
    with pytest.raises(UsageError, match=r"^its input is not JSON \(" + "w" * 57 + r"\.\.\.\); "):
        run("jq", ["."], Flow(text="w" * 100))
    with pytest.raises(UsageError, match=r"^its input is not JSON \(\(empty\)\); "):
        run("jq", ["."], Flow(text="\x0c\n"))  # a form feed: space to Python, not to a JSON reader


@pytest.mark.parametrize(
    ("filter_", "message"),
    [
        (".a.b", 'jq: Cannot index number with string ("b")'),
        ('error("boom:")', "jq: boom"),
        ('error("boom X")', "jq: boom X"),
        ('error("a\\nb")', "jq: a"),
    ],
)
def test_a_filter_that_fails_on_json_is_the_handler_s_error(filter_, message):
    with pytest.raises(HandlerError) as caught:
        run("jq", [filter_], Flow(text='{"a": 1}'))
    assert str(caught.value) == message


def test_save_writes_the_whole_output_and_answers_with_its_size_shape_and_first_items(tmp_path):
    items = [f"{i} é " + " ".join(["a"] * 200) for i in range(5)]
    flow = run("save", ["out.json"], Flow(value=items), str(tmp_path))
    written = (tmp_path / "out.json").read_text(encoding="utf-8")
    assert json.loads(written) == items
    size = len(written.encode("utf-8"))
    assert size == len(written) + 5  # bytes, not characters
    lines = flow.text.split("\n")
    assert lines[0] == f"Saved {size:,} bytes to out.json: a JSON array of 5 items. First items:"
    assert [line[:7] for line in lines[1:]] == ['  "0 é ', '  "1 é ', '  "2 é ', ""]  # three, as JSON
    assert lines[1] == '  "0 é ' + " ".join(["a"] * 96) + "..."  # clipped to 200 characters


def test_save_of_text_shows_its_first_lines(tmp_path):
    flow = run("save", ["notes.txt"], Flow(text="one\ntwo\nthree\nfour\n"), str(tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert flow.text == "Saved 19 bytes to notes.txt: text of 4 lines. First lines:\n  one\n  two\n  three\n"
    flow = run("save", ["obj.json"], Flow(value={"a": 1}), str(tmp_path))
    assert flow.text == 'Saved 8 bytes to obj.json: a JSON object of 1 keys (a). First lines:\n  {"a": 1}\n'


def test_save_of_nothing_says_so_in_one_line(tmp_path):
    assert run("save", ["empty.txt"], Flow(text=""), str(tmp_path)).text == (
        "Saved 0 bytes to empty.txt: text of 0 lines.\n"
    )


def test_save_without_a_folder_writes_to_the_current_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    run("save", ["sub/a.txt"], Flow(text="x"), None)
    assert (tmp_path / "sub" / "a.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("args", "local", "message"),
    [
        ([], True, "`save` takes one file name: save out.json."),
        (["a", "b"], True, "`save` takes one file name: save out.json."),
        (["a"], False, "`save` writes to the caller's folder, which only a caller on this machine has"),
        (["../a"], True, "`save ../a`: the file must be in the caller's folder ("),
        (["/etc/a"], True, "`save /etc/a`: the file must be in the caller's folder ("),
        (["."], True, "`save .`: the file must be in the caller's folder ("),
        (["no/such/a"], True, "`save no/such/a`: its folder does not exist; save into an existing folder."),
    ],
)
def test_save_refuses_a_file_out_of_the_caller_s_folder(tmp_path, args, local, message):
    with pytest.raises(UsageError) as caught:
        make("save", args, str(tmp_path), local)
    assert str(caught.value).startswith(message)
    assert list(tmp_path.iterdir()) == []


def test_save_that_cannot_write_is_the_handler_s_error(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(HandlerError, match=r"^cannot write taken: Is a directory$"):
        run("save", ["taken"], Flow(text="x"), str(tmp_path))
