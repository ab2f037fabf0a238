"""JSON Schema <-> argv in-process (`schema.py`): what a tool's schema becomes (options, flags, notes, shapes), and
what argv becomes (the arguments object, validated, errors in argv terms); test_wrap_schema.py checks the same
against a real upstream server."""

import json

import pytest

from mcp_cli.engine import schema as s
from mcp_cli.engine.parser import build, parse
from mcp_cli.errors import UsageError
from mcp_cli.tree import Command, Param
from mcp_cli.types import LOCAL_FILES

NOOP = {"kind": "python", "target": "builtins:print"}


def obj(required=(), **properties) -> dict:
    return {"type": "object", "properties": properties, **({"required": list(required)} if required else {})}


def run(schema: dict, argv: list[str]) -> dict:
    """The arguments object `argv` becomes for a tool with `schema`, as the runtime makes it."""
    cmd = Command("c", params=s.params(schema), schema=schema, handler=NOOP)
    return s.arguments(cmd, parse(build("t c", cmd), cmd, argv), s.checker(cmd))


def refused(schema: dict, argv: list[str]) -> str:
    """The usage error for `argv`, as a caller on this machine (whose `@FILE` arguments are read) gets it."""
    reading = LOCAL_FILES.set(True)
    try:
        with pytest.raises(UsageError) as err:
            run(schema, argv)
    finally:
        LOCAL_FILES.reset(reading)
    return err.value.message


def options(schema: dict) -> dict[str, Param]:
    return {p.name: p for p in s.params(schema)}


DEFS = {"$defs": {"name": {"type": "string", "description": "A name."}, "loop": {"$ref": "#/$defs/loop"}}}


@pytest.mark.parametrize(
    ("node", "resolved"),
    [
        ({"$ref": "#/$defs/name"}, {"type": "string", "description": "A name."}),
        ({"$ref": "#/$defs/name", "description": "Its own."}, {"type": "string", "description": "Its own."}),
        ({"$ref": "#/$defs/loop"}, {"$ref": "#/$defs/loop"}),  # a reference to itself ends
        ({"$ref": "other.json#/x", "title": "T"}, {"title": "T"}),  # out of the schema: nothing to offer
        (
            {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "T"},
            {"type": "string", "title": "T", "nullable": True},
        ),
        (
            {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/name"}]},
            {"type": "string", "description": "A name.", "nullable": True},
        ),
        (
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            {"anyOf": [{"type": "string"}, {"type": "integer"}], "type": ["string", "integer"]},
        ),  # a union
        (
            {
                "anyOf": [
                    {"const": "a", "description": "A."},
                    {"const": 1, "title": "One"},
                    {"enum": ["b", "c"]},
                    {"type": "null"},
                ]
            },
            {"enum": ["a", 1, "b", "c"], "enumDescriptions": ["A.", "One", "", ""], "nullable": True},
        ),  # constants
        ({"oneOf": [{"const": "a"}, {"const": "b"}]}, {"enum": ["a", "b"]}),  # no descriptions, no empty list
        (
            {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/name"}}, {"type": "string"}, {"type": "null"}]},
            {
                "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/name"}}, {"type": "string"}],
                "type": ["array", "string"],
                "items": {"$ref": "#/$defs/name"},
                "nullable": True,
            },
        ),  # list | scalar | null
        (
            {"oneOf": [obj(["id", "v"], id={"type": "integer"}, v={}), obj(["name", "v"], name={"type": "string"})]},
            {
                "anyOf": [obj(["id", "v"], id={"type": "integer"}, v={}), obj(["name", "v"], name={"type": "string"})],
                "type": "object",
                "properties": {"id": {"type": "integer"}, "v": {}, "name": {"type": "string"}},
                "required": ["v"],
            },
        ),  # variants of an object: every field, required where each requires it
        ({"anyOf": [{"type": "string"}, {"not": {}}]}, {"anyOf": [{"type": "string"}, {"not": {}}]}),  # unknown
        ({"type": ["integer", "null"]}, {"type": "integer"}),
        ({"type": ["string", "integer", "null"]}, {"type": ["string", "integer"]}),
        (
            {
                "allOf": [
                    obj(["a"], a={"type": "string"}),
                    {"$ref": "#/$defs/name", "required": ["b"], "properties": {"b": {}}},
                ],
                "required": ["c"],
            },
            {
                "properties": {"a": {"type": "string"}, "b": {}},
                "required": ["c", "a", "b"],
                "type": "string",
                "description": "A name.",
            },
        ),
        ("not a schema", {}),
    ],
)
def test_references_combinations_and_nullable_types_resolve(node, resolved):
    assert s._Schema({**DEFS, "type": "object"}).resolve(node) == resolved


@pytest.mark.parametrize(
    ("prop", "kind"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "integer"),
        ({"type": "number"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "array"}, "array"),
        ({"type": "object"}, "object"),
        ({"properties": {}}, "object"),
        ({"enum": ["a", "b"]}, "string"),
        ({"enum": ["a", 1]}, "union"),
        ({"const": 3}, "integer"),
        ({"enum": [None, "a"]}, "string"),  # null: the option not given
        ({"enum": [{"a": 1}]}, "object"),
        ({"type": "null"}, "any"),
        ({"type": ["string", "integer"]}, "union"),
        ({"type": ["string", "strin"]}, "any"),
        ({"type": ["integer", "null"]}, "integer"),  # as an upstream wrote it, not yet resolved
        ({"type": ["null"]}, "any"),
        ({"enum": [True, False]}, "boolean"),
        ({"enum": [1.5, 2]}, "union"),  # a number and an integer
        ({"enum": [[1], [2]]}, "array"),
        ({"type": "strin"}, "any"),
        ({}, "any"),
    ],
)
def test_the_kind_of_a_property(prop, kind):
    assert s.kind_of(prop) == kind


@pytest.mark.parametrize(
    ("path", "flags"),
    [
        (["fullPath"], ("--full-path", "--fullPath", "--full_path")),
        (["max_results"], ("--max-results", "--max_results", "--max_results")),
        (["help"], ("--arg-help", "--arg-help", "--arg-help")),
        (["H"], ("--arg-h", "--arg-H", "--arg-h")),
        (["_help"], ("--arg-help", "--arg-_help", "--arg-help")),  # `--help` as kebab-case: the help's own flag
        (["Json"], ("--arg-json", "--arg-Json", "--arg-json")),
        (["help", "json"], ("--help.json", "--help.json", "--help.json")),  # only a whole name is reserved
        (["filters", "dueDate"], ("--filters.due-date", "--filters.dueDate", "--filters.due_date")),
        (["año nuevo"], ("--año-nuevo", "--año-nuevo", "--año_nuevo")),
    ],
)
def test_a_property_s_flags(path, flags):
    assert s._spellings(path) == flags


def test_two_properties_that_spell_one_flag_each_get_their_own():
    found = options(
        obj(
            fullPath={"type": "string"},
            full_path={"type": "string"},
            verbose={"type": "boolean"},
            no_verbose={"type": "string"},
        )
    )
    assert found["fullPath"].flags == ["--full-path", "--fullPath"]
    assert (
        found["full_path"].flags == ["--full_path"]
        and found["full_path"].notes == "not --full-path, which sets fullPath"
    )
    assert found["verbose"].flags == ["--verbose"]  # and --no-verbose, which argparse adds
    assert (
        found["no_verbose"].flags == ["--no_verbose"]
        and "not --no-verbose, which sets verbose" in found["no_verbose"].notes
    )
    three = options(obj(aB={"type": "string"}, a_b={"type": "string"}, **{"a-b": {"type": "string"}}))
    assert [p.flags for p in three.values()][:3] == [["--aB"], ["--a_b"], ["--a-b"]]  # as spelt, first
    assert three["aB"].notes == three["a_b"].notes == "not --a-b, which sets a-b"
    ranged = options(obj(fullPath={"type": "string"}, full_path={"type": "integer", "minimum": 1}))
    assert ranged["full_path"].notes == "not --full-path, which sets fullPath; 1.."
    nested = options(obj(filters=obj(fullPath={"type": "string"}, full_path={"type": "string"})))
    assert nested["filters.full_path"].notes == "not --filters.full-path, which sets filters.fullPath"
    taken = options(obj(**{"a b": {"type": "string"}, "a-b": {"type": "string"}}))  # both spelt --a-b
    assert taken["a b"].flags == ["--a-b", "--a_b"] and taken["a-b"].flags == ["--a-b-2"]
    assert taken["a-b"].notes == "not --a-b, which sets a b"


def test_what_each_kind_of_property_becomes():
    found = options(
        obj(
            ["name", "tags"],
            name={"type": "string", "description": "The  name\n of it."},
            title_only={"type": "string", "title": "Titled"},
            count={"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
            ratio={"type": "number", "exclusiveMinimum": 0},
            below={"type": "number", "exclusiveMaximum": 9},
            small={"type": "integer", "maximum": 5},
            when={"type": "string", "format": "date-time"},
            mode={"type": "string", "enum": ["fast", "slow"]},
            weight={"type": "number", "enum": [0.5, 1.5, 2]},  # float enums are choices of a number
            odd={"type": "string", "enum": ["a", 1]},  # not all of its type: no choices
            fixed={"type": "string", "const": "only"},
            either={"enum": [1, "a"]},
            verbose={"type": "boolean", "default": False},
            tags={"type": "array", "items": {"type": "integer"}},
            people={"type": "array", "items": obj(["name"], name={"type": "string"})},
            filters={**obj(["status"], status={"type": "string"}), "default": {"status": "open"}},
            extra={"default": "x"},
        )
    )
    assert (found["name"].help, found["name"].required, found["name"].type) == ("The name of it.", True, "string")
    assert found["title_only"].help == "Titled" and not found["title_only"].required
    assert (found["count"].type, found["count"].default, found["count"].notes) == ("integer", 3, "1..10")
    assert (
        found["ratio"].notes == "0.."
        and found["below"].notes == "..9"
        and found["small"].notes == "..5"
        and found["when"].notes == "date-time"
    )
    assert found["mode"].choices == ["fast", "slow"] and found["weight"].choices == [0.5, 1.5, 2]
    assert found["odd"].choices is None and found["fixed"].choices == ["only"]
    assert (found["either"].choices, found["either"].metavar, found["either"].notes) == (["1", "a"], None, "")
    assert (found["verbose"].action, found["verbose"].default) == ("negatable", False)
    assert (found["tags"].action, found["tags"].metavar, found["tags"].required) == ("append", "INT", True)
    assert found["people"].metavar == "JSON" and found["people"].notes == "each a JSON object, fields below"
    assert found["people"].details == ["name*: string"]
    assert found["filters"].notes == "JSON {status*: string}" and found["filters"].default is None
    assert found["filters.status"].required is False  # required inside an object that is optional
    assert found["extra"].default == "x" and found["extra"].notes == "JSON or text"
    assert list(found)[-1] == "@json" and (found["@json"].flags, found["@json"].metavar) == (["--json"], "JSON")
    assert found["mode"].help == found["mode"].notes == ""  # no description, nothing to note
    assert found["filters"].details == []  # its fields are options of their own


def test_a_tool_without_arguments_has_no_options_at_all():
    assert s.params({"type": "object"}) == s.params({"type": "object", "properties": {}}) == s.params({}) == []


def test_objects_are_options_field_by_field_two_levels_deep():
    deep = obj(a=obj(b=obj(c=obj(d={"type": "string"}))))
    assert [p.name for p in s.params(deep)] == ["a", "a.b", s.JSON_ALL]
    assert run(deep, ["--a.b", '{"c": {"d": "x"}}']) == {"a": {"b": {"c": {"d": "x"}}}}
    assert refused(deep, ["--a.b.c", "{}"]) == "unknown option --a.b.c."
    assert refused(deep, ["--a.b", '{"c": {"d": 1}}']) == "--a.b.c.d: 1 is not of type 'string'."
    camel = obj(a=obj(b=obj(c=obj(dueDate={"type": "string"}))))
    assert refused(camel, ["--a.b", '{"c": {"dueDate": 1}}']) == "--a.b.c.dueDate: 1 is not of type 'string'."


@pytest.mark.parametrize(
    ("prop", "shape"),
    [
        (
            obj(
                ["a"],
                a={"type": "string"},
                b={"type": "array", "items": {"type": "integer"}},
                c={"enum": ["x", "y"]},
                d={},
                e="?",
            ),
            "{a*: string, b: [integer], c: x|y, d: any, e: any}",
        ),
        (obj(a=obj(b=obj(c=obj(d={"type": "string"})))), "{a: {b: {c: object}}}"),  # three levels, then the kind
        ({"type": "array", "items": obj(a=obj(b=obj(c={"type": "string"})))}, "[{a: {b: object}}]"),  # items count
        (obj(**{"n" * 150: {"type": "string"}}), "{" + "n" * 150 + ": string}"),  # 160 characters: whole
        ({"enum": [1, 2, 3, 4]}, "1|2|3|4"),
        ({"enum": ["a", "b", "c", "d", "e"]}, "string"),
        ({"type": "array"}, "[any]"),
        (
            obj(**{f"p{i}": {"type": "string"} for i in range(30)}),
            "{" + ", ".join(f"p{i}: string" for i in range(30))[:155] + "...}",
        ),
    ],
)
def test_a_compact_shape_of_a_value(prop, shape):
    assert s.shape(prop) == shape and len(shape) <= 160


SCHEMA = obj(
    ["query"],
    query={"type": "string"},
    limit={"type": "integer"},
    ratio={"type": "number"},
    maybe={"type": ["integer", "null"]},
    weight={"type": "number", "enum": [0.5, 1.5]},
    tags={"type": "array", "items": {"type": "string"}},
    ids={"type": "array", "items": {"type": "integer"}},
    ratios={"type": "array", "items": {"type": "number"}},
    maxResults={"type": "integer"},
    flags={"type": "array", "items": {"type": "boolean"}},
    refs={"type": "array", "items": {"$ref": "#/$defs/id"}},
    filters=obj(["status"], status={"type": "string"}, since={"type": "integer"}, dueDate={"type": "string"}),
    extra={},
    **{"$defs": {"id": {"type": "integer"}}},
)
SCHEMA["$defs"] = SCHEMA["properties"].pop("$defs")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--query", "q"], {"query": "q"}),
        (["--query", "q", "--limit", "5", "--ratio", "1e2"], {"query": "q", "limit": 5, "ratio": 100}),
        (["--query", "q", "--maybe", "4"], {"query": "q", "maybe": 4}),
        (["--query", "q", "--weight", "1.5"], {"query": "q", "weight": 1.5}),
        (["--query", "q", "--tags", "a", "--tags", '["b", "c"]'], {"query": "q", "tags": ["a", "b", "c"]}),
        (["--query", "q", "--ids", "1", "--ids", " [2, 3]"], {"query": "q", "ids": [1, 2, 3]}),
        (["--query", "q", "--flags", "true", "--flags", "false"], {"query": "q", "flags": [True, False]}),
        (["--query", "q", "--ids", "1e2"], {"query": "q", "ids": [100]}),  # integral values go as integers
        (["--query", "q", "--ratios", "1.5", "--ratios", "2e0"], {"query": "q", "ratios": [1.5, 2]}),
        (["--query", "q", "--refs", "7"], {"query": "q", "refs": [7]}),
        (
            ["--query", "q", "--filters.status", "open", "--filters.since", "3"],
            {"query": "q", "filters": {"status": "open", "since": 3}},
        ),
        (
            ["--query", "q", "--filters", '{"status": "x", "since": 1}', "--filters.since", "2"],
            {"query": "q", "filters": {"status": "x", "since": 2}},
        ),
        (["--query", "q", "--extra", "7"], {"query": "q", "extra": 7}),
        (["--query", "q", "--extra", "seven"], {"query": "q", "extra": "seven"}),
        (["--query", "q", "--extra", '{"a": [1]}'], {"query": "q", "extra": {"a": [1]}}),
        (["--json", '{"query": "j", "limit": 1}', "--limit", "2"], {"query": "j", "limit": 2}),
        (
            ["--json", '{"query": "j", "filters": 3}', "--filters.status", "s"],
            {"query": "j", "filters": {"status": "s"}},
        ),
    ],
)
def test_argv_becomes_this_arguments_object(argv, expected):
    assert json.dumps(run(SCHEMA, argv), sort_keys=True) == json.dumps(expected, sort_keys=True)  # 100, not 100.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "missing required option --query (or give it inside --json)."),
        (
            ["--query", "q", "--filters.since", "1"],
            "missing required option --filters.status (or give it inside --json).",
        ),
        (
            ["--json", '{"query": "q", "filters": {"deep": {}}}'],
            "missing required option --filters.status (or give it inside --json).",
        ),
        (
            ["--query", "q", "--limit", "x"],
            "argument --limit: invalid integer value: 'x'; give a whole number in the digits 0-9, e.g. 12",
        ),
        (
            ["--query", "q", "--limit", "٣"],
            "argument --limit: invalid integer value: '٣'; write it in the digits 0-9: 3",
        ),
        (["--query", "q", "--ids", "1" * 5000], f"--ids: expected integer, got '{'1' * 24}'... (5,000 characters)."),
        (["--query", "q", "--weight", "2"], "argument --weight: invalid choice: 2 (choose from 0.5, 1.5)"),
        (["--query", "q", "--ids", "1", "--ids", "two"], "--ids: expected integer, got 'two'."),
        (["--query", "q", "--flags", "maybe"], "--flags: expected boolean, got 'maybe'."),
        (["--query", "q", "--tags", "[1, "], "--tags: not valid JSON (Expecting value at character 4): '[1, '."),
        (
            ["--query", "q", "--filters", "{nope"],
            "--filters: not valid JSON (Expecting property name enclosed in double quotes at character 1): '{nope'.",
        ),
        (["--query", "q", "--filters", "[1]"], "--filters: [1] is not of type 'object'."),
        (["--json", '{"query": "q", "maxResults": "x"}'], "--max-results: 'x' is not of type 'integer'."),
        (
            ["--json", '{"query": "q", "filters": {"status": "s", "dueDate": 1}}'],
            "--filters.due-date: 1 is not of type 'string'.",
        ),
        (["--query", "q", "--json", "[1]"], '--json: expected a JSON object like \'{"name": "value"}\'.'),
        (["--json", '{"query": 1, "limit": "x"}'], "--limit: 'x' is not of type 'integer'."),  # the first by path
        (
            ["--json", '{"query": "q", "filters": {"status": 1}, "limit": "x"}'],
            "--limit: 'x' is not of type 'integer'.",
        ),  # the shallowest first
        (["--json", '{"query": "q", "ids": ["x"]}'], "--ids: 'x' is not of type 'integer'."),
        (["--json", "@/no/such/file.json"], "--json: cannot read @/no/such/file.json: No such file or directory."),
        (
            ["--json", '{"query": "q"}', "--query", "1", "--ratio", "nan"],
            "argument --ratio: invalid number value: "
            "'nan'; give a number in the digits 0-9, "
            "with a `.` or an exponent if need be "
            "(2.5, 1e3)",
        ),
    ],
)
def test_what_does_not_fit_the_schema_is_told_in_argv_terms(argv, message):
    assert refused(SCHEMA, argv) == message


def test_json_from_a_file_that_is_not_json_says_so(tmp_path):
    (tmp_path / "args.json").write_text("{nope")
    assert refused(SCHEMA, ["--json", f"@{tmp_path / 'args.json'}"]) == (
        "--json: not valid JSON (Expecting property name enclosed in double quotes at character 1): "
        f"'the contents of @{tmp_path / 'args.json'}'."
    )


def test_a_closed_schema_names_what_it_does_not_take():
    closed = {**obj(a={"type": "string"}), "additionalProperties": False}
    assert refused(closed, ["--json", '{"a": "x", "zz": 1}']) == (
        "Additional properties are not allowed ('zz' was unexpected); use only the options listed below."
    )
    under = obj(o={**obj(a={"type": "string"}), "additionalProperties": False})
    assert refused(under, ["--o", '{"a": 1}']) == "--o.a: 1 is not of type 'string'."
    assert refused(obj(a={"type": "string", "minLength": 2}), ["--a", "x"]) == "--a: 'x' is too short."
    assert refused({**obj(a={}), "minProperties": 1}, ["--json", "{}"]) == "--json: {} should be non-empty."


def test_draft_4_s_boolean_exclusive_bounds_are_read_as_draft_4_meant_them():
    """`"minimum": 0, "exclusiveMinimum": true` (older schema generators): more than 0, not "at least true" (1)."""
    pages = {"type": "array", "items": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}}
    assert run(obj(pages=pages), ["--json", '{"pages": [1, 2, 3]}']) == {"pages": [1, 2, 3]}
    assert (
        refused(obj(pages=pages), ["--json", '{"pages": [0, 2]}'])
        == "--pages: 0 is less than or equal to the minimum of 0."
    )
    top = {"type": "number", "maximum": 10, "exclusiveMaximum": True}
    assert run(obj(n=top), ["--n", "9.5"]) == {"n": 9.5}
    assert refused(obj(n=top), ["--n", "10"]) == "--n: 10 is greater than or equal to the maximum of 10."
    inclusive = {"type": "integer", "minimum": 1, "exclusiveMinimum": False}
    assert run(obj(n=inclusive), ["--n", "1"]) == {"n": 1}
    draft4 = {**obj(n={"type": "integer", "minimum": 1, "exclusiveMinimum": True}), "$schema": DRAFT4}
    assert refused(draft4, ["--n", "1"]).startswith("--n: 1 is less than or equal to the minimum of 1")


@pytest.mark.parametrize("named", [{}, 5, ["draft-04"]])
def test_a_schema_whose_dollar_schema_is_no_string_is_checked_as_2020_12(named):
    """An upstream's `"$schema": {}` names no draft: the call is checked as MCP's default draft, not failed."""
    schema = {**obj(n={"type": "integer"}), "$schema": named}
    assert run(schema, ["--n", "3"]) == {"n": 3}
    assert refused(schema, ["--json", '{"n": "x"}']) == "--n: 'x' is not of type 'integer'."


DRAFT4 = "http://json-schema.org/draft-04/schema#"


@pytest.mark.parametrize(
    "broken",
    [
        {"type": "strin"},  # an unknown type
        {"$ref": "other.json#/x"},  # a reference out of the schema
        {"type": "string", "maxLength": "x"},  # a keyword of the wrong type
        {"type": "string", "pattern": "["},  # a pattern that is no regex
        {"type": "string", "enum": 3},
        {"type": "number", "multipleOf": 0},
        {"type": "number", "minimum": "a"},
    ],
)
def test_an_upstream_s_broken_schema_is_the_upstream_s_to_enforce(broken):
    assert run(obj(x=broken), ["--x", "1"]) == {"x": "1" if broken.get("type") == "string" else 1}
    assert run({**obj(x=broken), "minProperties": "a"}, ["--x", "1"]) == run(obj(x=broken), ["--x", "1"])


def test_the_schema_of_a_command_made_from_its_parameters():
    cmd = Command(
        "c",
        handler=NOOP,
        params=[
            Param("a", flags=["--a"], required=True, help="A."),
            Param("v", flags=["-v"], action="count"),
            Param("q", flags=["-q"], action="store_true"),
            Param("k", flags=["-k"], action="store_false"),
            Param("c", flags=["--c"], action="negatable"),
            Param("m", flags=["--m"], choices=["x", "y"], default="x"),
            Param("t", flags=["--t"], action="append", type="integer"),
            Param("f", nargs="+", type="path"),
            Param("two", nargs=2, type="number"),
            Param("j", flags=["--j"], type="json"),
            Param("any", nargs="*"),
            Param("rest", nargs="..."),
            Param("@json", flags=["--json"]),
        ],
    )
    assert s.input_schema(cmd) == {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "string", "description": "A."},
            "v": {"type": "integer"},
            "q": {"type": "boolean"},
            "k": {"type": "boolean"},
            "c": {"type": "boolean"},
            "m": {"type": "string", "enum": ["x", "y"], "default": "x"},
            "t": {"type": "array", "items": {"type": "integer"}},
            "f": {"type": "array", "items": {"type": "string"}},
            "two": {"type": "array", "items": {"type": "number"}},
            "j": {},
            "any": {"type": "array", "items": {"type": "string"}},
            "rest": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert s.input_schema(Command("c", handler=NOOP, passthrough=True)) == {
        "type": "object",
        "properties": {"args": {"type": "array", "items": {"type": "string"}}},
    }
    upstream = obj(a={"type": "string"})
    assert s.input_schema(Command("c", handler=NOOP, schema=upstream)) is upstream


def test_the_missing_option_named_is_the_one_not_given():
    both = obj(required=("a", "b"), a={"type": "string"}, b={"type": "string"})
    assert refused(both, ["--json", '{"a": "x"}']) == "missing required option --b (or give it inside --json)."


UNIONS = obj(
    when={"type": ["string", "integer"]},
    code={"anyOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "integer"}]},
    level={"type": ["integer", "boolean"]},
    pick={"anyOf": [{"const": 1}, {"const": "auto"}, {"type": "null"}]},
    genes={"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}, {"type": "null"}]},
    ids={"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "integer"}]},
    ref={"oneOf": [obj(["id"], id={"type": "integer"}), obj(["name"], name={"type": "string"})]},
)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--when", "20240708"], {"when": "20240708"}),  # text where text is allowed: a date stays a date
        (["--when", "007"], {"when": "007"}),  # leading zeros survive
        (["--when", '"5"'], {"when": "5"}),  # JSON-quoted: text
        (["--json", '{"when": 5}'], {"when": 5}),  # another type where text is allowed: inside --json
        (["--code", "abc"], {"code": "abc"}),
        (["--code", "123"], {"code": 123}),  # not text this property takes: read as JSON
        (["--level", "5"], {"level": 5}),
        (["--level", "true"], {"level": True}),
        (["--pick", "1"], {"pick": 1}),  # choices of several types: each as its type
        (["--pick", "auto"], {"pick": "auto"}),
        (["--genes", "BRAF"], {"genes": "BRAF"}),  # given once: the one value
        (["--genes", "BRAF", "--genes", "KRAS"], {"genes": ["BRAF", "KRAS"]}),  # repeated: the list
        (["--genes", '["BRAF"]'], {"genes": ["BRAF"]}),  # a JSON list: the list
        (["--ids", "7"], {"ids": 7}),
        (["--ids", "7", "--ids", "8"], {"ids": [7, 8]}),
        (["--ref", '{"id": 3}'], {"ref": {"id": 3}}),
    ],
)
def test_a_union_keeps_text_as_text_where_text_is_allowed(argv, expected):
    assert run(UNIONS, argv) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pick", "2"], "argument --pick: invalid choice: '2' (choose from '1', 'auto')"),
        (["--level", "high"], "--level: 'high' is not of type 'integer', 'boolean'."),
        (["--ref", '{"x": 1}'], '--ref: got {"x": 1}; expected {id*: integer}|{name*: string}.'),  # not "any of"
        (["--json", '{"when": [1]}'], "--when: [1] is not of type 'string', 'integer'."),
    ],
)
def test_a_wrong_value_of_a_union_is_told_with_what_it_takes(argv, message):
    assert refused(UNIONS, argv) == message


def test_a_list_item_without_a_field_it_needs_says_so():
    rows = obj(rows={"type": "array", "items": obj(["path"], path={"type": "string"})})
    assert refused(rows, ["--rows", '{"a": 1}']) == "--rows: an item has no 'path', which each needs."


def test_how_a_union_and_its_choices_show():
    found = options(UNIONS)
    assert (found["when"].metavar, found["when"].type, found["when"].notes) == ("TEXT|INT", "string", "")
    assert found["level"].metavar == "INT|BOOL" and found["pick"].choices == ["1", "auto"]
    assert (found["genes"].action, found["genes"].metavar, found["genes"].notes) == (
        "append",
        "TEXT",
        "one value or a list",
    )
    assert found["ids"].metavar == "INT"
    assert found["ref"].notes == "JSON {id*: integer}|{name*: string}" and found["ref.id"].type == "integer"


def test_choices_show_what_each_means():
    found = options(
        obj(
            mode={"anyOf": [{"const": "fast", "description": "Quick. Rough."}, {"const": "slow"}]},
            plain={"type": "string", "enum": ["a", "b"]},
            vs={"type": "string", "enum": ["x", "yy"], "enumDescriptions": ["Ex.", "Why."]},
        )
    )
    assert (found["mode"].choices, found["mode"].details) == (["fast", "slow"], ["fast  Quick.", "slow"])
    assert found["plain"].details == [] and found["vs"].details == ["x   Ex.", "yy  Why."]


def test_fields_of_an_object_value_show_one_a_line():
    refs = {
        "$defs": {
            "file": obj(
                ["path"],
                path={"type": "string", "description": "Where. More."},
                tags={"type": "array", "items": {"$ref": "#/$defs/tag"}},
            ),
            "tag": obj(name={"type": "string"}),
        }
    }
    deep = obj(
        files={"type": "array", "items": {"$ref": "#/$defs/file"}},
        a=obj(b=obj(c=obj(d={"type": "string"}))),
        wide=obj(**{f"f{i}": {} for i in range(s.FIELDS_SHOWN + 2)}),
    )
    found = options({**deep, **refs})
    assert found["files"].details == ["path*: string           Where.", "tags: [{name: string}]"]  # $refs resolved
    assert found["files"].notes == "each a JSON object, fields below"
    assert found["a"].details == [] and found["a.b"].details == ["c: {d: string}"]  # no options of their own
    assert found["a.b"].notes == "a JSON object, fields below" and found["a"].notes == "JSON {b: {c: {d: string}}}"
    assert len(found["wide.f0"].details) == 0 and found["wide"].details == []
    wide = options(obj(rows={"type": "array", "items": obj(**{f"f{i}": {} for i in range(s.FIELDS_SHOWN + 2)})}))
    assert wide["rows"].details[-1] == "... and 2 more (see the tool's schema)"
    assert len(wide["rows"].details) == s.FIELDS_SHOWN + 1


def test_a_union_s_text_check_that_cannot_be_read_takes_the_text():
    broken = obj(x={"anyOf": [{"type": "string", "pattern": "["}, {"type": "integer"}]})
    assert run(broken, ["--x", "5"]) == {"x": "5"}


LISTS = obj(
    fields={"type": "array", "items": {"type": "string", "enum": ["name", "path"]}},
    kinds={"type": "array", "items": {"anyOf": [{"const": "a", "description": "The a."}, {"const": "b"}]}},
    labels={"type": "array", "items": {"anyOf": [{"type": "string"}, obj(["name"], name={"type": "string"})]}},
    who={"anyOf": [{"type": "string"}, obj(["login"], login={"type": "string"})]},
)


def test_choices_and_fields_of_each_item_of_a_list():
    found = options(LISTS)
    assert found["fields"].notes == "each one of: name, path" and found["fields"].choices is None
    assert found["kinds"].notes == "" and found["kinds"].details == ["a  The a.", "b"]  # the lines say them
    assert found["labels"].metavar == "TEXT|JSON" and found["labels"].details == ["name*: string"]
    assert found["labels"].notes == "each text, or a JSON object with the fields below"
    assert found["who"].notes == "text, or a JSON object with the fields below"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--fields", "name", "--fields", '["path"]'], {"fields": ["name", "path"]}),  # a JSON list still goes
        (["--labels", "bug", "--labels", '{"name": "x"}'], {"labels": ["bug", {"name": "x"}]}),
        (["--who", '{"login": "ann"}'], {"who": {"login": "ann"}}),  # a JSON object where one is taken: the object
        (["--who", "{ann}"], {"who": "{ann}"}),  # not JSON: text
        (["--who", '"{}"'], {"who": "{}"}),  # JSON-quoted: text
    ],
)
def test_a_json_object_or_list_given_where_a_union_takes_one_is_read_as_one(argv, expected):
    assert run(LISTS, argv) == expected


def test_a_wrong_item_choice_is_told_with_the_choices():
    assert refused(LISTS, ["--fields", "size"]) == "--fields: 'size' is not one of ['name', 'path']."


@pytest.mark.parametrize(
    ("prop", "notes"),
    [
        ({"type": "array", "items": {"type": "object"}}, "each JSON object"),  # no fields to list: the shape
        ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "text or JSON: string|object"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}], "minimum": 1}, "1.."),  # the type is the metavar
        ({"type": "strange", "enum": ["a", 1]}, 'one of: "a", 1; JSON or text'),  # choices of an unknown type
        ({"type": "string", "items": {"enum": ["a"]}}, ""),  # items of no list say nothing
        ({"anyOf": [{"type": "array", "items": {"type": "string"}}, obj(a={"type": "string"})]}, "one value or a list"),
        ({"type": "integer", "minimum": 1, "format": "int32"}, "1..; int32"),
    ],
)
def test_the_notes_of_other_values(prop, notes):
    assert options(obj(x=prop))["x"].notes == notes


@pytest.mark.parametrize(
    ("prop", "shape"),
    [
        ({"type": ["string", "integer"]}, "string|integer"),
        ({"type": ["array", "string"], "items": {"type": "integer"}}, "[integer]|string"),
        ({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}, "string|[string]"),
        ({"anyOf": [{"const": "a"}, {"const": "b"}]}, "a|b"),
        ({"type": ["string", "object"], "properties": {"a": {"type": "string"}}}, "string|{a: string}"),
        ({"anyOf": [{"type": "string"}, {"not": {}}]}, "any"),  # a member of no known kind: no variants to show
    ],
)
def test_the_shape_of_a_union(prop, shape):
    assert s.shape(s._Schema(obj()).deep(prop)) == shape
    assert s.shape({**obj(a={"type": "string"}), "anyOf": [{"required": ["a"]}]}) == "{a: string}"  # no variants


def test_a_union_s_default_shows_and_a_number_given_once_is_the_one_value():
    either = {"type": ["string", "integer"]}
    found = options(obj(when={**either, "default": "today"}, bad={**either, "default": {"a": 1}}))
    assert found["when"].default == "today" and found["bad"].default is None  # a JSON default is the upstream's
    ratio = obj(r={"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "number"}]})
    assert run(ratio, ["--r", "5"]) == {"r": 5} and run(ratio, ["--r", "5", "--r", "1.5"]) == {"r": [5, 1.5]}


CHAIN = {"$defs": {f"l{i}": obj(n={"$ref": f"#/$defs/l{i + 1}"}) for i in range(6)} | {"l6": {"type": "string"}}}


def test_deep_resolves_fields_items_values_and_members_down_to_its_depth():
    doc = s._Schema({**CHAIN, "type": "object"})
    one = doc.deep({"$ref": "#/$defs/l0"}, 1)
    assert one == obj(n=obj(n={"$ref": "#/$defs/l2"}))  # one level down resolved, the next as it was
    assert doc.deep({"$ref": "#/$defs/l0"}, 2) == obj(n=obj(n=obj(n={"$ref": "#/$defs/l3"})))
    assert doc.deep({"$ref": "#/$defs/l0"}, 0) == doc.resolve({"$ref": "#/$defs/l0"}) == obj(n={"$ref": "#/$defs/l1"})
    default = doc.deep({"$ref": "#/$defs/l0"})
    assert default == doc.deep({"$ref": "#/$defs/l0"}, s.MAX_DEPTH + 2) != doc.deep({"$ref": "#/$defs/l0"}, 5)
    kept = {"type": "object", "properties": {"a": {"$ref": "#/$defs/l6"}}}
    assert doc.deep(kept)["properties"]["a"] == {"type": "string"}
    assert kept == {"type": "object", "properties": {"a": {"$ref": "#/$defs/l6"}}}  # the schema itself unchanged
    values = doc.deep({"type": "object", "additionalProperties": {"$ref": "#/$defs/l6"}})
    assert values["additionalProperties"] == {"type": "string"}
    two = {"$ref": "#/$defs/l0"}
    assert doc.deep({"type": "array", "items": two}, 2)["items"] == obj(n=obj(n={"$ref": "#/$defs/l2"}))
    assert doc.deep({"type": "object", "additionalProperties": two}, 2)["additionalProperties"] == obj(
        n=obj(n={"$ref": "#/$defs/l2"})
    )
    assert doc.deep({"anyOf": [two, {"type": "integer"}]}, 2)["anyOf"][0] == obj(n=obj(n={"$ref": "#/$defs/l2"}))
    members = doc.deep({"anyOf": [obj(a={"$ref": "#/$defs/l6"}), {"type": "integer"}]})
    assert members["anyOf"][0] == obj(a={"type": "string"}) and members["properties"] == {"a": {"type": "string"}}


def test_a_lone_constant_s_description_is_its_choice_s_and_a_list_s_is_none_s():
    found = s._Schema(obj()).resolve(
        {"anyOf": [{"enum": ["a"], "description": "A."}, {"enum": ["b", "c"], "description": "B or C."}]}
    )
    assert found == {"enum": ["a", "b", "c"], "enumDescriptions": ["A.", "", ""]}


@pytest.mark.parametrize(
    ("value", "kind"),
    [(True, "boolean"), (1, "integer"), (1.5, "number"), ("a", "string"), ([], "array"), ({}, "object"), (None, "any")],
)
def test_the_kind_of_a_value(value, kind):
    assert s._value_kind(value) == kind


def test_choice_lines_take_descriptions_as_given_and_field_lines_any_schema():
    long = "aa " + " ".join(["bcd"] * 30)
    found = options(
        obj(
            m={"type": "string", "enum": ["a", "b", "c"], "enumDescriptions": ["A.", long]},
            rows={"type": "array", "items": obj(any=True)},
        )
    )
    assert found["m"].details == ["a  A.", "b  aa" + " bcd" * 18 + "...", "c"]  # 80 characters; one too few: none
    assert found["rows"].details == ["any: any"]  # a boolean schema: anything


@pytest.mark.parametrize("extra", [0, 1])
def test_field_lines_stop_at_fields_shown_saying_how_many_more(extra):
    fields = {f"f{i}": {"type": "string"} for i in range(20 + extra)}  # 20 field lines at most
    fields["f0"]["description"] = "aa " + " ".join(["bcd"] * 30)
    lines = options(obj(rows={"type": "array", "items": obj(**fields)}))["rows"].details
    assert lines[0].startswith("f0: string ") and lines[0].endswith(" aa" + " bcd" * 13 + "...")  # 60 characters
    assert lines[20:] == (["... and 1 more (see the tool's schema)"] if extra else [])


def test_placeholders_of_json_values_and_lists_of_anything():
    found = options(
        obj(o=obj(a={"type": "string"}), free={}, bare={"type": "array"}, anything={"type": "array", "items": {}})
    )
    assert found["o"].metavar == found["free"].metavar == found["anything"].metavar == "JSON"
    assert found["bare"].metavar == "TEXT"


def test_the_one_value_of_a_list_or_value_reads_as_an_option_of_its_type():
    assert run(UNIONS, ["--genes", '"BRAF"']) == {"genes": '"BRAF"'}  # text, as a text option takes it
    flags = obj(f={"anyOf": [{"type": "array", "items": {"type": "boolean"}}, {"type": "boolean"}]})
    assert run(flags, ["--f", "true"]) == {"f": True}
    assert refused(flags, ["--f", "5"]) == "--f: got [5]; expected [boolean]|boolean."  # not a boolean: a list of one


WIDE = {f"f{i:02}": {"type": "string"} for i in range(40)}
NULLABLE = obj(
    x={"anyOf": [obj(required=["f00"], **WIDE), {"type": "null"}]}, y={"anyOf": [{"not": {}}, {"type": "null"}]}
)


def test_a_value_no_member_of_a_union_takes_is_told_with_what_it_takes_cut_to_fit():
    given = {"f00": 5, "pad": "p" * 200}
    inner = ", ".join(["f00*: string"] + [f"f{i:02}: string" for i in range(1, 40)])
    expected = ("{" + inner + "}")[:296] + "...}"  # the shape cut at 300 characters, the value at 100
    assert refused(NULLABLE, ["--x", json.dumps(given)]) == f"--x: got {json.dumps(given)[:100]}; expected {expected}."
    assert refused(NULLABLE, ["--y", "5"]) == "--y: 5 is not valid under any of the given schemas."  # no shape to tell


def test_an_array_of_arrays_takes_each_repeated_json_array_as_one_item():
    rows = obj(data={"type": "array", "items": {"type": "array", "items": {"type": "string"}}})
    assert run(rows, ["--data", '["a","b"]', "--data", '["c","d"]'])["data"] == [["a", "b"], ["c", "d"]]
    assert run(rows, ["--data", '[["a","b"],["c","d"]]'])["data"] == [["a", "b"], ["c", "d"]]  # the whole list
    flat = obj(tags={"type": "array", "items": {"type": "string"}})
    assert run(flat, ["--tags", '["a","b"]', "--tags", "c"])["tags"] == ["a", "b", "c"]  # a list of items, as before
