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
from ..text import words
from ..tree import Command, Param
from ..types import VALUE_TYPES, integral, json_value, loads, of_schema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

JSON_ALL = "@json"  # the dest of --json, never a property path
RESERVED = {"help", "h", "json"}
MAX_DEPTH = 2
_SCALARS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


class _Schema:
    """A schema whose `$ref`s resolve within it (through `referencing`, as jsonschema resolves them)."""

    def __init__(self, root: dict[str, Any]) -> None:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self.root = root
        resource = Resource.from_contents(root, default_specification=DRAFT202012)
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
                if len(real) == 1:
                    return {**{k: v for k, v in node.items() if k != key}, **real[0], "nullable": True}
        kinds = node.get("type")
        if isinstance(kinds, list):
            kinds = [k for k in kinds if k != "null"]
            node = {**node, "type": kinds[0] if len(kinds) == 1 else kinds}
        return node


def kind_of(prop: dict[str, Any]) -> str:
    """string, integer, number, boolean, array, object, or any (a union or an unknown type)."""
    kind = prop.get("type")
    if isinstance(kind, str) and kind in _SCALARS | {"array": 1, "object": 1}:
        return kind
    if kind is None and "properties" in prop:
        return "object"
    if kind is None and "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
        return "string"
    return "any"


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


def _notes(prop: dict[str, Any], kind: str) -> str:
    bits = []
    lo, hi = prop.get("minimum", prop.get("exclusiveMinimum")), prop.get("maximum", prop.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        bits.append(f"{'' if lo is None else lo}..{'' if hi is None else hi}")
    if prop.get("format"):
        bits.append(str(prop["format"]))
    if "enum" in prop and kind == "any":
        bits.append("one of: " + ", ".join(json.dumps(v) for v in prop["enum"]))
    if kind == "array" and isinstance(prop.get("items"), dict) and kind_of(prop["items"]) == "object":
        bits.append(f"each JSON {shape(prop['items'])}")
    if kind == "object":
        bits.append(f"JSON {shape(prop)}")
    elif kind == "any":
        bits.append("JSON or text")
    return "; ".join(bits)


def shape(prop: dict[str, Any], depth: int = 0, limit: int = 160) -> str:
    """A compact type signature: `{name*: string, tags: [string]}` (* = required)."""
    kind = kind_of(prop)
    if kind == "array":
        return "[" + (shape(prop["items"], depth + 1) if isinstance(prop.get("items"), dict) else "any") + "]"
    if kind != "object" or depth > 2 or not isinstance(prop.get("properties"), dict):
        return "|".join(map(str, prop["enum"])) if "enum" in prop and len(prop["enum"]) <= 4 else kind
    required = set(prop.get("required") or [])
    inner = ", ".join(
        f"{k}{'*' if k in required else ''}: {shape(v, depth + 1) if isinstance(v, dict) else 'any'}"
        for k, v in prop["properties"].items()
    )
    text = "{" + inner + "}"
    return text if len(text) <= limit else text[: limit - 4] + "...}"


def _param(path: list[str], prop: dict[str, Any], required: bool, flags: list[str], note: str) -> Param:
    kind = kind_of(prop)
    description = " ".join(str(prop.get("description") or prop.get("title") or "").split())
    notes = "; ".join(x for x in (note, _notes(prop, kind)) if x)
    help_text = f"{description} [{notes}]" if notes and description else description or (f"[{notes}]" if notes else "")
    enum = prop.get("enum") if isinstance(prop.get("enum"), list) else None
    if "const" in prop:
        enum = [prop["const"]]
    param = functools.partial(Param, name=".".join(path), flags=flags, help=help_text, required=required)
    default = prop.get("default")
    if kind == "boolean":
        return param(type="boolean", action="negatable", default=default)
    if kind in ("string", "integer", "number"):
        same_type = enum is not None and all(isinstance(v, (str if kind == "string" else (int, float))) for v in enum)
        return param(type=kind, choices=enum if same_type else None, default=default)
    if kind == "array":
        return param(type="string", action="append", metavar=_item_metavar(prop))
    return param(type="string", metavar="JSON", default=default if not isinstance(default, (dict, list)) else None)


def _item_metavar(prop: dict[str, Any]) -> str:
    items = prop.get("items")
    return of_schema(items.get("type") if isinstance(items, dict) else None).metavar


def params(schema: dict[str, Any]) -> list[Param]:
    """Options for every property (objects also field by field, two levels deep), then `--json`."""
    doc = _Schema(schema)
    found: list[tuple[list[str], dict[str, Any], bool]] = []

    def visit(node: dict[str, Any], prefix: list[str], required_here: bool, depth: int) -> None:
        required = set(node.get("required", [])) if isinstance(node.get("required"), list) else set()
        props = node.get("properties")
        if not isinstance(props, dict):
            props = {}
        for name, raw in props.items():
            prop = doc.resolve(raw)
            path = prefix + [str(name)]
            found.append((path, prop, required_here and name in required))
            if kind_of(prop) == "object" and isinstance(prop.get("properties"), dict) and depth < MAX_DEPTH:
                visit(prop, path, False, depth + 1)

    visit(doc.resolve(schema), [], True, 1)
    flags, notes = _flags([path for path, _, _ in found], [kind_of(prop) == "boolean" for _, prop, _ in found])
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


def _convert(param: Param, prop: dict[str, Any], value: Any) -> Any:
    """An option's parsed value as the JSON value its property expects."""
    kind = kind_of(prop)
    if kind == "array":
        items = _Schema({}).resolve(prop.get("items")) if isinstance(prop.get("items"), dict) else {}
        out: list[Any] = []
        for raw in value:
            if raw.lstrip().startswith("["):
                out.extend(_json(param, raw))
            else:
                out.append(_scalar(param, kind_of(items), raw))
        return out
    if kind in ("object", "any") and isinstance(value, str):
        return _scalar(param, kind, value)
    return value


def _json(param: Param, text: str) -> Any:
    try:
        return json_value(text)
    except json.JSONDecodeError as exc:
        what = text if not text.startswith("@") else f"the contents of {text}"
        raise UsageError(f"{param.flags[0]}: not valid JSON ({exc.msg} at character {exc.pos}): {what!r}.") from None
    except ValueError as exc:
        raise UsageError(f"{param.flags[0]}: {exc}.") from None


def _scalar(param: Param, kind: str, raw: str) -> Any:
    if kind == "object":
        return _json(param, raw)
    if kind in ("integer", "number", "boolean", "any"):
        try:
            return integral(loads(raw)) if kind in ("integer", "number") else loads(raw)
        except ValueError:
            if kind == "any":
                return raw
            raise UsageError(f"{param.flags[0]}: expected {kind}, got {raw!r}.") from None
    return raw


def arguments(
    cmd: Command, values: dict[str, Any], check: Checker, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments object for a schema-backed command, checked against its schema by `check` (errors in argv
    terms). `base` (an object a pipeline stage gave) goes under `--json` and the options."""
    schema, doc = cmd.schema or {}, check.doc
    by_name = {p.name: p for p in cmd.params}
    result: dict[str, Any] = copy.deepcopy(base or {})
    if JSON_ALL in values:
        given = _json(by_name[JSON_ALL], values[JSON_ALL])
        if not isinstance(given, dict):
            raise UsageError('--json: expected a JSON object like \'{"name": "value"}\'.')
        result.update(given)
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
        target[path[-1]] = _convert(by_name[name], node, value)
    validate(check, result, {name: p.flags[0] for name, p in by_name.items() if p.flags})
    return result


@dataclass
class Checker:
    """A command's schema made ready once: its references resolvable, and its validator."""

    doc: _Schema
    validator: Validator


def checker(cmd: Command) -> Checker:
    """The Checker of a command's schema (kept by the runtime with the command's parser)."""
    import jsonschema

    schema = cmd.schema or {}
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return Checker(_Schema(schema), cls(schema))


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
        flag = _flag(flags, path + [missing]) if missing else "an option"
        raise UsageError(f"missing required option {flag} (or give it inside --json).")
    if err.validator == "additionalProperties":
        raise UsageError(f"{err.message}; use only the options listed below.")
    where = _flag(flags, path) if path else "--json"
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
