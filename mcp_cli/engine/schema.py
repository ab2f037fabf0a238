"""JSON Schema <-> argv: a tool's input schema becomes options, and parsed options become its arguments object.

Each property is an option named after it in kebab-case (`--max-results`; `--maxResults` and `--max_results`,
the upstream's spelling, work too, and the arguments object keeps the upstream's names): typed scalars, choices
for enums, `--flag/--no-flag` for booleans, repeatable options (or a JSON array) for arrays, dotted options
(`--filters.status open`) or one JSON value for objects. `--json '{...}'` (or `--json @file.json`) gives the
whole object; options beside it override its fields. `$ref`/`$defs`, `allOf`, `anyOf`/`oneOf` (nullable
included) are resolved. The result is validated against the schema, and errors are told in argv terms.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..text import columns, first_sentence, words
from ..tree import Command, Param
from ..types import VALUE_TYPES, integral, json_value, loads, of_schema, shown

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

JSON_ALL = "@json"  # the dest of --json, never a property path
RESERVED = {"help", "h", "json"}
MAX_DEPTH = 2
_SCALARS = ("string", "integer", "number", "boolean")
_KINDS = (*_SCALARS, "array", "object")


def _names_draft(schema: dict[str, Any]) -> bool:
    """Whether a schema's `$schema` may name a draft: a string, or none given. Anything else (`{}`, `5`, as a broken
    upstream may send) names none, and the schema is read as 2020-12, MCP's default: `referencing`'s and
    `jsonschema`'s own lookups would raise on it."""
    return isinstance(schema.get("$schema", ""), str)


class _Schema:
    """A schema whose `$ref`s resolve within it (through `referencing`, as jsonschema resolves them)."""

    def __init__(self, root: dict[str, Any]) -> None:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self.root = root
        if _names_draft(root):
            resource = Resource.from_contents(root, default_specification=DRAFT202012)
        else:
            resource = DRAFT202012.create_resource(root)
        uri = resource.id() or "urn:mcp-cli:schema"
        self._resolver = Registry().with_resource(uri, resource).resolver(uri)

    def resolve(self, node: object, seen: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Follow `$ref`, merge `allOf`, and strip null from `anyOf`/`oneOf`/type lists (nullable)."""
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            from referencing.exceptions import Unresolvable

            try:
                target = self._resolver.lookup(ref).contents
            except Unresolvable:  # a reference out of the schema (another file, the network): nothing to offer
                target = {}
            merged = {**self.resolve(target, seen | {ref}), **{k: v for k, v in node.items() if k != "$ref"}}
            return merged
        if "allOf" in node and isinstance(node["allOf"], list):
            out = {k: v for k, v in node.items() if k != "allOf"}
            for part in node["allOf"]:
                sub = self.resolve(part, seen)
                out.setdefault("properties", {}).update(sub.get("properties", {}))
                out["required"] = out.get("required", []) + sub.get("required", [])
                out.update({k: v for k, v in sub.items() if k not in ("properties", "required")})
            return out
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if isinstance(options, list):
                real = [self.resolve(o, seen) for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
                rest = {k: v for k, v in node.items() if k != key}
                null = {"nullable": True} if len(real) < len(options) else {}
                if len(real) == 1:
                    return {**rest, **real[0], "nullable": True}
                if real:
                    return {**rest, **_union(real), **null}
        kinds = node.get("type")
        if isinstance(kinds, list):
            kinds = [k for k in kinds if k != "null"]
            node = {**node, "type": kinds[0] if len(kinds) == 1 else kinds}
        return node

    def deep(self, node: object, depth: int = MAX_DEPTH + 2) -> dict[str, Any]:
        """`resolve` down to `depth` levels: fields, items, members and values too (what help shows of a value)."""
        out = self.resolve(node)
        if depth <= 0:
            return out
        out = dict(out)
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: self.deep(v, depth - 1) for k, v in out["properties"].items()}
        for key in ("items", "additionalProperties"):
            if isinstance(out.get(key), dict):
                out[key] = self.deep(out[key], depth - 1)
        if isinstance(out.get("anyOf"), list):
            out["anyOf"] = [self.deep(m, depth - 1) for m in out["anyOf"]]
        return out


def _constants(node: dict[str, Any]) -> tuple[list[Any], list[str]] | None:
    """The values a constant schema (`const`, `enum`) allows and what each means (a lone value: the schema's
    description or title), or None for a schema that allows more than constants."""
    about = " ".join(str(node.get("description") or node.get("title") or "").split())
    if "const" in node:
        return [node["const"]], [about]
    if isinstance(node.get("enum"), list):
        return list(node["enum"]), [about if len(node["enum"]) == 1 else ""] * len(node["enum"])
    return None


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One schema for the (resolved, non-null) members of an `anyOf`/`oneOf`: constants become an `enum`, with
    `enumDescriptions` (VS Code's key) where members describe themselves; members of known kinds a `type` list, with
    the `items` of the array member and the fields of the object member; anything else stays an `anyOf`."""
    consts = [_constants(m) for m in members]
    if all(c is not None for c in consts):
        values = [v for c in consts if c for v in c[0]]
        about = [d for c in consts if c for d in c[1]]
        return {"enum": values, **({"enumDescriptions": about} if any(about) else {})}
    kinds = list(dict.fromkeys(k for m in members for k in _kinds(m)))
    if not kinds or "any" in kinds:
        return {"anyOf": members}
    out: dict[str, Any] = {"type": kinds if len(kinds) > 1 else kinds[0], "anyOf": members}
    objects = [m for m in members if isinstance(m.get("properties"), dict)]
    if objects:  # the fields of every object member; required: those every one of them requires
        out["properties"] = {k: v for m in objects for k, v in m["properties"].items()}
        out["required"] = [k for k in out["properties"] if all(k in (m.get("required") or []) for m in objects)]
    items = [m["items"] for m in members if isinstance(m.get("items"), dict)]
    if items:  # the items of the (first) array member
        out["items"] = items[0]
    return out


def _value_kind(value: object) -> str:
    """The JSON Schema type of a value (`any` for null)."""
    if isinstance(value, bool):
        return "boolean"
    kinds = {int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), "any")


def choices_of(prop: dict[str, Any]) -> list[Any] | None:
    """The values an `enum` or `const` allows (null left out: that is the option not given), or None."""
    values = [prop["const"]] if "const" in prop else prop.get("enum")
    return [v for v in values if v is not None] if isinstance(values, list) else None


def _kinds(prop: dict[str, Any]) -> list[str]:
    """The kinds a property allows: one, or several for a union (a `type` list, or choices of several types)."""
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k if k in _KINDS else "any" for k in kind if k != "null"]
        return kinds or ["any"]
    if isinstance(kind, str):
        return [kind if kind in _KINDS else "any"]
    if "properties" in prop:
        return ["object"]
    values = choices_of(prop)
    if values:
        return list(dict.fromkeys(_value_kind(v) for v in values))
    return ["any"]


def kind_of(prop: dict[str, Any]) -> str:
    """string, integer, number, boolean, array, object; union (several of those: `string | integer`, a `type`
    list, an `anyOf` of them, choices of several types); or any (an unknown type, no type at all)."""
    kinds = _kinds(prop)
    if "any" in kinds:
        return "any"
    return kinds[0] if len(kinds) == 1 else "union"


def _spellings(path: list[str]) -> tuple[str, str, str]:
    """A property's flags: kebab-case, as spelled upstream, snake_case (`fullPath` -> `--full-path`, `--fullPath`,
    `--full_path`). A name that is one of RESERVED gets an `arg-` prefix (`--arg-help`)."""

    def spelt(part: str, sep: str) -> str:  # `words` knows only ASCII: other names only change their separators
        return (sep.join(words(part)) or part) if part.isascii() else re.sub(r"[\s_-]+", sep, part)

    forms = [".".join(spelt(part, sep) for part in path) for sep in ("-", "_")]
    kebab, verbatim, snake = forms[0], ".".join(path).replace(" ", "-"), forms[1]
    if len(path) == 1 and (kebab.lower() in RESERVED or verbatim.lower() in RESERVED):
        return "--arg-" + kebab, "--arg-" + verbatim, "--arg-" + snake
    return "--" + kebab, "--" + verbatim, "--" + snake


def _flags(paths: list[list[str]], negatable: list[bool]) -> tuple[list[list[str]], list[str]]:
    """The flags of each property, kebab-case first, its other spellings after (not shown in help), and a note for
    each: when two properties kebab to one flag, the first has it, and the other goes by its own spelling, with a
    note saying so (`fullPath` is `--full-path`, `full_path` is `--full_path` "not --full-path, which sets
    fullPath"). Where even that is taken, a number is added."""
    taken: dict[str, int] = {}  # flag -> the property that has it

    def forms(i: int, flag: str) -> list[str]:
        return [flag] + (["--no-" + flag[2:]] if negatable[i] else [])  # argparse makes --no-X for a boolean

    def holder(i: int, flag: str) -> int | None:
        return next((taken[f] for f in forms(i, flag) if taken.get(f, i) != i), None)

    def claim(i: int, flag: str) -> bool:
        if holder(i, flag) is not None:
            return False
        taken.update(dict.fromkeys(forms(i, flag), i))
        return True

    spellings = [_spellings(path) for path in paths]
    own = [claim(i, verbatim) for i, (_, verbatim, _) in enumerate(spellings)]  # a name spelt as given is kept
    flags, notes = [], []
    for i, (kebab, verbatim, _) in enumerate(spellings):
        other = holder(i, kebab)
        if other is None:
            claim(i, kebab)
        numbered = (f"{kebab}-{n}" for n in itertools.count(2))
        flags.append([kebab if other is None else verbatim if own[i] else next(f for f in numbered if claim(i, f))])
        notes.append("" if other is None else f"not {kebab}, which sets {'.'.join(paths[other])}")
    for i, spelt in enumerate(spellings):
        flags[i] += [f for f in dict.fromkeys(spelt) if f not in flags[i] and claim(i, f)]
    return flags, notes


def _fields_of(prop: dict[str, Any]) -> dict[str, Any] | None:
    """The object whose fields a value has: the property itself, its items, or a union's object or items member."""
    kinds = _kinds(prop)
    if "object" in kinds and isinstance(prop.get("properties"), dict) and prop["properties"]:
        return prop
    items = prop.get("items")
    if "array" in kinds and isinstance(items, dict) and isinstance(items.get("properties"), dict):
        return items if items["properties"] else None
    return None


def _notes(prop: dict[str, Any], kind: str, expanded: bool) -> str:
    """What an option's help says of its value beyond its type (a range, a format, a shape); `expanded`: its fields
    are options of their own."""
    bits = []
    lo, hi = prop.get("minimum", prop.get("exclusiveMinimum")), prop.get("maximum", prop.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        bits.append(f"{'' if lo is None else lo}..{'' if hi is None else hi}")
    if prop.get("format"):
        bits.append(str(prop["format"]))
    fields, kinds = _fields_of(prop), _kinds(prop)
    items = prop["items"] if "array" in kinds and isinstance(prop.get("items"), dict) else {}
    if kind == "any" and choices_of(prop):
        bits.append("one of: " + ", ".join(json.dumps(v) for v in choices_of(prop) or []))
    if kind == "union" and "array" in kinds:
        bits.append("one value or a list")
    if choices_of(items) and not _described(items):  # argparse leaves them to the schema: a JSON list may be given
        bits.append("each one of: " + ", ".join(map(_text, choices_of(items) or [])))
    elif fields is not None and fields is items:
        either = "each text, or a JSON object with the fields below"
        bits.append("each a JSON object, fields below" if _kinds(items) == ["object"] else either)
    elif _kinds(items) == ["object"]:
        bits.append(f"each JSON {shape(items)}")
    if kind == "object":
        bits.append(f"JSON {shape(prop)}" if expanded or not fields else "a JSON object, fields below")
    elif kind == "union" and "object" in kinds and "array" not in kinds:
        bits.append("text, or a JSON object with the fields below" if fields else f"text or JSON: {shape(prop)}")
    elif kind == "any":
        bits.append("JSON or text")
    return "; ".join(bits)


def _described(prop: dict[str, Any]) -> bool:
    """Whether a property's choices say what they mean (`enumDescriptions`, from described constants)."""
    about = prop.get("enumDescriptions")
    return isinstance(about, list) and any(about)


def shape(prop: dict[str, Any], depth: int = 0, limit: int = 160) -> str:
    """A compact type signature: `{name*: string, tags: [string]}` (* = required), `string|integer`, `a|b`."""
    kind = kind_of(prop)
    members = prop.get("anyOf")
    if isinstance(members, list) and len(members) > 1 and kind != "any":  # each variant
        return "|".join(dict.fromkeys(shape(m, depth) for m in members if isinstance(m, dict)))
    if kind == "union":
        return "|".join(shape({**prop, "type": k}, depth) if k in ("array", "object") else k for k in _kinds(prop))
    if kind == "array":
        return "[" + (shape(prop["items"], depth + 1) if isinstance(prop.get("items"), dict) else "any") + "]"
    values = choices_of(prop)
    if kind != "object" or depth > 2 or not isinstance(prop.get("properties"), dict):
        return "|".join(map(str, values)) if values and len(values) <= 4 else kind
    required = set(prop.get("required") or [])
    inner = ", ".join(
        f"{k}{'*' if k in required else ''}: {shape(v, depth + 1) if isinstance(v, dict) else 'any'}"
        for k, v in prop["properties"].items()
    )
    text = "{" + inner + "}"
    return text if len(text) <= limit else text[: limit - 4] + "...}"


FIELDS_SHOWN = 20  # field lines under an option, at most


def _details(prop: dict[str, Any], expanded: bool) -> list[str]:
    """Lines under an option: each choice with what it means (when any says), or each field of its JSON object (or of
    each item) with its shape and first sentence, `*` for required, when the fields are no options of their own."""
    described = next((p for p in (prop, prop.get("items")) if isinstance(p, dict) and _described(p)), None)
    if described is not None:  # the option's choices, or each item's
        about = map(str, described["enumDescriptions"])
        meant = dict(zip(map(_text, described.get("enum") or []), about, strict=False))
        values = choices_of(described) or []
        return columns([(_text(v), first_sentence(meant.get(_text(v), ""), 80)) for v in values], indent=0)
    fields = _fields_of(prop)
    if fields is None or (expanded and fields is prop):
        return []
    required = set(fields.get("required") or [])
    rows = [
        (f"{k}{'*' * (k in required)}: {shape(v, 1)}", first_sentence(str(v.get("description") or ""), 60))
        for k, v in fields["properties"].items()
    ]  # the fields resolved by `deep`: every one a dict
    more = len(rows) - FIELDS_SHOWN
    cut = [f"... and {more} more (see the tool's schema)"] if more > 0 else []
    return columns(rows[:FIELDS_SHOWN], indent=0) + cut


def _text(value: object) -> str:
    """A choice as argv gives it: a string as it is, anything else as JSON (`1`, `true`)."""
    return value if isinstance(value, str) else json.dumps(value)


def _param(path: list[str], prop: dict[str, Any], required: bool, expanded: bool, flags: list[str], note: str) -> Param:
    kind = kind_of(prop)
    description = " ".join(str(prop.get("description") or prop.get("title") or "").split())
    notes = "; ".join(x for x in (note, _notes(prop, kind, expanded)) if x)
    enum = choices_of(prop)
    param = functools.partial(
        Param,
        name=".".join(path),
        flags=flags,
        help=description,
        required=required,
        notes=notes,
        details=_details(prop, expanded),
    )
    default = prop.get("default")
    if kind == "boolean":
        return param(type="boolean", action="negatable", default=default)
    if kind in ("string", "integer", "number"):
        same_type = enum is not None and all(isinstance(v, (str if kind == "string" else (int, float))) for v in enum)
        return param(type=kind, choices=enum if same_type else None, default=default)
    if kind == "union":
        kinds = _kinds(prop)
        shown = [_item_metavar(prop) if k == "array" else of_schema(k).metavar for k in kinds]
        metavar = "|".join(dict.fromkeys(shown))
        if "array" in kinds:
            return param(type="string", action="append", metavar=metavar)
        choices = [_text(v) for v in enum] if enum else None
        plain = default if not isinstance(default, (dict, list)) else None
        return param(type="string", choices=choices, metavar=None if choices else metavar, default=plain)
    if kind == "array":
        return param(type="string", action="append", metavar=_item_metavar(prop))
    return param(type="string", metavar="JSON", default=default if not isinstance(default, (dict, list)) else None)


def _item_metavar(prop: dict[str, Any]) -> str:
    """The placeholder of one item of an array: `TEXT`, `INT`, `JSON`, `TEXT|INT` for items of several kinds."""
    items = prop.get("items")
    if not isinstance(items, dict):
        return of_schema(None).metavar
    return "|".join(dict.fromkeys(of_schema(k if k != "any" else "object").metavar for k in _kinds(items)))


def params(schema: dict[str, Any]) -> list[Param]:
    """Options for every property (objects also field by field, two levels deep), then `--json`."""
    doc = _Schema(schema)
    found: list[tuple[list[str], dict[str, Any], bool, bool]] = []  # path, property, required, fields as options

    def visit(node: dict[str, Any], prefix: list[str], required_here: bool, depth: int) -> None:
        required = set(node.get("required", [])) if isinstance(node.get("required"), list) else set()
        props = node.get("properties")
        if not isinstance(props, dict):
            props = {}
        for name, raw in props.items():
            prop = doc.deep(raw)
            path = prefix + [str(name)]
            expanded = kind_of(prop) == "object" and isinstance(prop.get("properties"), dict) and depth < MAX_DEPTH
            found.append((path, prop, required_here and name in required, expanded))
            if expanded:
                visit(prop, path, False, depth + 1)

    visit(doc.resolve(schema), [], True, 1)
    flags, notes = _flags([f[0] for f in found], [kind_of(f[1]) == "boolean" for f in found])
    out = [_param(*f, fl, note) for f, fl, note in zip(found, flags, notes, strict=True)]
    if not out:  # a tool without arguments needs no --json either
        return out
    out.append(
        Param(
            name=JSON_ALL,
            type="string",
            flags=["--json"],
            metavar="JSON",
            help="All options as one JSON object (or @FILE).",
        )
    )
    return out


def _convert(param: Param, prop: dict[str, Any], value: Any, check: Checker) -> Any:
    """An option's parsed value as the JSON value its property expects. An option that takes one value or a list
    (`string | [string]`) sends the value when given once, the list when repeated (or given a JSON `[...]`)."""
    kind, kinds = kind_of(prop), _kinds(prop)
    if "array" in kinds and isinstance(value, list):
        if kind == "union" and len(value) == 1 and not value[0].lstrip().startswith("["):
            one = _scalar(param, {**prop, "type": [k for k in kinds if k != "array"]}, value[0], check)
            if _value_kind(one) in kinds or (_value_kind(one) == "integer" and "number" in kinds):
                return one
        items = check.doc.resolve(prop.get("items")) if isinstance(prop.get("items"), dict) else {}
        out: list[Any] = []
        nested = "array" in _kinds(items)  # items that are arrays: `--rows '["a","b"]'` is one item
        for raw in value:
            if raw.lstrip().startswith("["):
                given = _json(param, raw)
                whole = not nested or (isinstance(given, list) and all(isinstance(x, list) for x in given))
                out.extend(given) if whole and isinstance(given, list) else out.append(given)
            else:
                out.append(_scalar(param, items, raw, check))
        return out
    if kind in ("object", "any", "union") and isinstance(value, str):
        return _scalar(param, prop, value, check)
    return value


def _json(param: Param, text: str) -> Any:
    try:
        return json_value(text)
    except json.JSONDecodeError as exc:
        what = text if not text.startswith("@") else f"the contents of {text}"
        raise UsageError(f"{param.flags[0]}: not valid JSON ({exc.msg} at character {exc.pos}): {what!r}.") from None
    except ValueError as exc:
        raise UsageError(f"{param.flags[0]}: {exc}.") from None


def _scalar(param: Param, prop: dict[str, Any], raw: str, check: Checker) -> Any:
    """One value from argv text. Of a union: a JSON-quoted value (`'"5"'`) is text; a JSON object or list is read as
    one where the union takes one; text where it takes text and the text fits (`007`, `20240708` stay text); else the
    value is read as JSON (`5`, `true`)."""
    kind = kind_of(prop)
    if kind == "union":
        kinds = _kinds(prop)
        try:
            value = integral(loads(raw))
        except ValueError:
            value = raw  # not JSON: the text, which the schema's check takes or names what was expected
        if isinstance(value, str) or (_value_kind(value) in ("object", "array") and _value_kind(value) in kinds):
            return value  # JSON-quoted text, or a JSON object or list where the union takes one
        return raw if "string" in kinds and _fits(check, prop, raw) else value
    if kind == "object":
        return _json(param, raw)
    if kind in ("integer", "number", "boolean", "any"):
        try:
            return integral(loads(raw)) if kind in ("integer", "number") else loads(raw)
        except ValueError:
            if kind == "any":
                return raw
            raise UsageError(f"{param.flags[0]}: expected {kind}, got {shown(raw)}.") from None
    return raw


def _fits(check: Checker, prop: dict[str, Any], value: str) -> bool:
    """Whether the (resolved) property takes the value; a schema the validator cannot read takes anything."""
    try:
        return bool(check.validator.evolve(schema=prop).is_valid(value))
    except Exception:  # an unknown format checker, a broken pattern: the upstream's to enforce
        return True


def arguments(
    cmd: Command, values: dict[str, Any], check: Checker, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments object for a schema-backed command, checked against its schema by `check` (errors in argv
    terms). `base` (an object a pipeline stage gave) goes under `--json` and the options."""
    schema, doc = cmd.schema or {}, check.doc
    by_name = {p.name: p for p in cmd.params}
    result: dict[str, Any] = _by_property(cmd, copy.deepcopy(base)) if base else {}
    if JSON_ALL in values:
        given = _json(by_name[JSON_ALL], values[JSON_ALL])
        if not isinstance(given, dict):
            raise UsageError('--json: expected a JSON object like \'{"name": "value"}\'.')
        result.update(_by_property(cmd, given))
    for name, value in values.items():
        if name == JSON_ALL or name not in by_name:
            continue
        path = name.split(".")
        node: dict[str, Any] = doc.resolve(schema)
        for part in path:
            node = doc.resolve((node.get("properties") or {}).get(part, {}))
        target = result
        for part in path[:-1]:
            if not isinstance(target.get(part), dict):
                target[part] = {}
            target = target[part]
        target[path[-1]] = _convert(by_name[name], node, value, check)
    validate(check, result, {name: p.flags[0] for name, p in by_name.items() if p.flags})
    return result


def _by_property(cmd: Command, given: dict[str, Any]) -> dict[str, Any]:
    """An object of arguments (piped in, or `--json`) with each key that names an option as its flag does, not as
    its property (`sub-issue-id`, `--sub-issue-id`: `sub_issue_id`), under the property's name: an agent writes the
    names the help shows it."""
    flags = {
        f.lstrip("-"): p.name
        for p in cmd.params
        if "." not in p.name and not p.name.startswith("@")
        for f in p.flags
        if f.startswith("--")
    }
    properties = (cmd.schema or {}).get("properties") or {}
    return {key if key in properties else flags.get(key.lstrip("-"), key): value for key, value in given.items()}


@dataclass
class Checker:
    """A command's schema made ready once: its references resolvable, and its validator."""

    doc: _Schema
    validator: Validator


def checker(cmd: Command) -> Checker:
    """The Checker of a command's schema (kept by the runtime with the command's parser)."""
    schema = cmd.schema or {}
    return Checker(_Schema(schema), validator(schema))


def validator(schema: dict[str, Any]) -> Validator:
    """The validator of a tool's schema: of the draft its `$schema` names, else of 2020-12 (MCP's default), with
    draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` (`"minimum": 0, "exclusiveMinimum": true`, as older
    generators still write them) read as draft 4 meant them rather than as the number 1."""
    import jsonschema

    default = jsonschema.Draft202012Validator
    cls = jsonschema.validators.validator_for(schema, default=default) if _names_draft(schema) else default
    if cls is not jsonschema.Draft4Validator:
        schema = _exclusive_as_numbers(schema)
    return cls(schema)


def _exclusive_as_numbers(node: Any) -> Any:
    """`node` with each boolean `exclusiveMinimum`/`exclusiveMaximum` beside its bound made the number form of later
    drafts: true moves its `minimum`/`maximum` there, false is dropped (a copy where anything changed; else `node`)."""
    if isinstance(node, list):
        items = [_exclusive_as_numbers(x) for x in node]
        return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
    if not isinstance(node, dict):
        return node
    out = {k: _exclusive_as_numbers(v) for k, v in node.items()}
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(key), bool) and bound in out:  # draft 4's flag is only ever beside its bound
            if out.pop(key):
                out[key] = out.pop(bound)
    changed = out.keys() != node.keys() or any(out[k] is not node[k] for k in out)
    return out if changed else node


def validate(check: Checker, args: dict[str, Any], flags: dict[str, str]) -> None:
    """Raise UsageError for the first schema violation, naming the option it concerns (`flags`: the flag of each
    property path, `a.b`)."""
    try:
        errors = sorted(check.validator.iter_errors(args), key=lambda e: (len(e.path), list(e.path)))
    except Exception:  # an unknown type or reference, a keyword of the wrong type, a pattern that is no regex:
        return  # an upstream's broken schema is the upstream's to enforce
    if not errors:
        return
    err = errors[0]
    path = [str(p) for p in err.path if not isinstance(p, int)]
    if err.validator == "required":
        given = err.instance if isinstance(err.instance, dict) else {}
        wanted = err.validator_value if isinstance(err.validator_value, Iterable) else ()
        missing = next((str(n) for n in wanted if n not in given), "")
        if missing and any(isinstance(p, int) for p in err.path):  # a field of an item of a list
            raise UsageError(f"{_flag(flags, path)}: an item has no {missing!r}, which each needs.")
        flag = _flag(flags, path + [missing]) if missing else "an option"
        raise UsageError(f"missing required option {flag} (or give it inside --json).")
    if err.validator == "additionalProperties":
        raise UsageError(f"{err.message}; use only the options listed below.")
    where = _flag(flags, path) if path else "--json"
    if err.validator in ("anyOf", "oneOf") and isinstance(err.schema, dict):  # "not valid under any of the given
        allowed = shape(check.doc.deep(err.schema), limit=300)  # schemas" says nothing: say what it takes
        if allowed != "any":
            raise UsageError(f"{where}: got {json.dumps(err.instance)[:100]}; expected {allowed}.")
    raise UsageError(f"{where}: {err.message}.")


def _flag(flags: dict[str, str], path: list[str]) -> str:
    """The flag of a property path; one deeper than options go, as spelled upstream."""
    return flags.get(".".join(path)) or _spellings(path)[1]


def input_schema(cmd: Command) -> dict[str, Any]:
    """A command's JSON Schema: an upstream tool's own input schema, or one made from its params (a property per
    param, named as the param; a passthrough command's tokens as `args`)."""
    if cmd.schema is not None:
        return cmd.schema
    params = [p for p in cmd.params if not p.name.startswith("@")]
    out: dict[str, Any] = {"type": "object", "properties": {p.name: _param_schema(p) for p in params}}
    required = [p.name for p in params if p.required]
    if required:
        out["required"] = required
    if cmd.passthrough:
        out["properties"]["args"] = {"type": "array", "items": {"type": "string"}}
    return out


def _param_schema(p: Param) -> dict[str, Any]:
    kind = "boolean" if p.action in ("store_true", "store_false", "negatable") else VALUE_TYPES[p.type].json
    out: dict[str, Any] = {"type": "integer" if p.action == "count" else kind} if kind else {}
    if p.choices is not None:
        out["enum"] = p.choices
    if p.action == "append" or p.nargs in ("+", "*", "...") or isinstance(p.nargs, int):
        out = {"type": "array", "items": out}
    if p.help:
        out["description"] = p.help
    if p.default is not None:
        out["default"] = p.default
    return out
