"""argparse interfaces read from the syntax tree: parsers, arguments, groups, mutually exclusive groups, subparsers.

Statements are followed in source order, with variables tracked by name (`parser`, `sub`, `self.parser`).
What cannot be read statically (a computed default, a custom type) degrades to a plain string parameter; an
argument added through a variable that cannot be followed (a helper function's parameter, a loop, a parser in
`parents=[...]` that is not a variable) or with computed names or options (`'--' + name`, `**options`) makes the
whole script pass its argv through, since rejecting a flag the script accepts would be worse. An option that
redefines a flag takes it from the earlier one, as `conflict_handler="resolve"` does. The arguments of
`parents=[...]` parsers are copied in, as argparse does; the options of a parser with subparsers are accepted by
every subcommand below it (see `parents`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any

from ...refs import SubprocessRef
from ...text import command_name
from ...tree import Command, Exclusive, Group, Node, Param
from . import parents
from .pyast import COMPUTED_CHOICES, COMPUTED_DEFAULT, UNKNOWN, Module, choice_list, noted, string

_TYPES = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "pathlib.Path": "path",
    "Path": "path",
    "os.fspath": "path",
    "argparse.FileType": "path",
}
_ACTIONS = {
    "store": "store",
    "store_true": "store_true",
    "store_false": "store_false",
    "store_const": "store_true",
    "append_const": "count",
    "count": "count",
    "append": "append",
    "extend": "append",
    "argparse.BooleanOptionalAction": "negatable",
    "BooleanOptionalAction": "negatable",
}


@dataclass
class _Parser:
    name: str = ""
    summary: str = ""
    description: str = ""
    params: list[Param] = field(default_factory=list)
    exclusive: list[Exclusive] = field(default_factory=list)
    children: list[_Parser] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    has_subparsers: bool = False


@dataclass
class _Group:
    parser: _Parser
    exclusive: Exclusive | None = None


@dataclass
class _Subparsers:
    parser: _Parser


def _help_text(text: str, default: object, choices: object) -> str:
    if "%(" not in text:
        return text
    shown = ", ".join(map(str, choices)) if isinstance(choices, list) else ""
    values = {"default": default, "choices": shown, "prog": "", "dest": ""}
    try:
        return text % values
    except (KeyError, ValueError, TypeError):
        return text


def _add(params: list[Param], param: Param) -> None:
    """Append `param`; an earlier option loses the flags it redefines, as with `conflict_handler="resolve"` (without
    it, argparse itself refuses the script), and is gone when it has none left."""
    kept = []
    for q in params:
        flags = [f for f in q.flags if f not in param.flags]
        if flags == q.flags:
            kept.append(q)
        elif flags:
            kept.append(replace(q, flags=flags))
    params[:] = [*kept, param]


def _param(mod: Module, call: ast.Call) -> Param | None:
    args = [mod.literal(a) for a in call.args]
    if not args:
        return None
    kw = mod.kwargs(call)
    action_node = kw.get("action")
    action_name: Any = "store"
    if action_node is not None:
        action_name = mod.literal(action_node)
        if action_name is UNKNOWN:
            action_name = mod.dotted(action_node)
    if action_name in ("help", "version"):
        return None
    action = _ACTIONS.get(action_name, "store")
    flags = [a for a in args if a.startswith("-")]
    dest = string(mod.literal(kw.get("dest")))
    if flags:
        long = next((f for f in flags if f.startswith("--")), flags[0])
        name = dest or long.lstrip("-").replace("-", "_")
    else:
        name = args[0]
    type_node = kw.get("type", ast.Name("str"))
    type_name = mod.dotted(type_node.func if isinstance(type_node, ast.Call) else type_node)
    ptype = _TYPES.get(type_name, "string")
    if action in ("store_true", "store_false", "negatable"):
        ptype = "boolean"
    if action == "count":
        ptype = "integer"
    choices = mod.literal(kw.get("choices"))
    default = mod.literal(kw.get("default"))
    computed = [COMPUTED_CHOICES if "choices" in kw and choice_list(choices) is None else ""]
    computed += [COMPUTED_DEFAULT if "default" in kw and default is UNKNOWN else ""]
    default = None if default is UNKNOWN else default
    choices = choice_list(choices)
    if action in ("store_true", "store_false") and default in (False, True):
        default = None
    nargs = mod.literal(kw.get("nargs"))
    if nargs is UNKNOWN and kw.get("nargs") is not None:
        nargs = "..." if "REMAINDER" in ast.unparse(kw["nargs"]) else "*"
    elif isinstance(nargs, str) and nargs not in ("?", "*", "+", "..."):
        nargs = "..." if nargs == "A..." else "*"
    cls = mod.classes.get(action_name) if isinstance(action_name, str) else None
    if nargs == 0 or (action == "store" and cls is not None and "nargs=0" in ast.unparse(cls)):
        action, ptype, nargs, default = "store_true", "boolean", None, None  # an action of its own that takes no value
    required = mod.literal(kw.get("required")) is True
    if not flags:
        required = nargs not in ("?", "*", "...") and default is None
    metavar = mod.literal(kw.get("metavar"))
    if isinstance(metavar, (list, tuple)):
        metavar = " ".join(map(str, metavar))
    help_value = mod.literal(kw.get("help"))
    help_text = "" if help_value is UNKNOWN or help_value == "==SUPPRESS==" else string(help_value)
    return Param(
        name=name,
        type=ptype,
        flags=flags,
        help=noted(" ".join(_help_text(help_text, default, choices).split()), *computed),
        required=required,
        default=default,
        choices=choices,
        nargs=None if nargs is UNKNOWN or nargs is None else nargs,
        action=action,
        metavar=metavar if isinstance(metavar, str) and metavar else None,
    )


def _listed(mod: Module, node: ast.expr | None) -> ast.expr | None:
    """The list a `parents=` names: itself, or the one list or tuple a variable of that name is assigned."""
    if not isinstance(node, ast.Name):
        return node
    values = [
        n.value
        for n in ast.walk(mod.tree)
        if isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == [node.id]
    ]
    return values[0] if len(values) == 1 and isinstance(values[0], (ast.List, ast.Tuple)) else node


def _parser_from(mod: Module, call: ast.Call, name: str = "") -> _Parser:
    kw = mod.kwargs(call)
    description = string(mod.literal(kw.get("description")))
    epilog = string(mod.literal(kw.get("epilog")))
    summary = string(mod.literal(kw.get("help"))) or description
    aliases = mod.literal(kw.get("aliases"))
    listed = _listed(mod, kw.get("parents"))
    parents = [ast.unparse(p) for p in listed.elts] if isinstance(listed, (ast.List, ast.Tuple)) else []
    parents += [ast.unparse(listed)] if listed is not None and not parents else []  # unknown: cannot be followed
    text = "\n\n".join(t.strip() for t in (description, epilog) if t.strip())
    return _Parser(
        name=name,
        summary=summary,
        description=text,
        aliases=aliases if isinstance(aliases, list) else [],
        parents=parents,
    )


_BUILDS = ("add_argument", "add_parser", "add_subparsers", "add_argument_group", "add_mutually_exclusive_group")
_Object = _Parser | _Group | _Subparsers
_DEPTH = 8  # helper functions followed inside each other


def _calls(node: ast.AST, skip: set[int]) -> list[tuple[ast.Call, str]]:
    """The calls under `node`, each with the variable its value goes to ('' for none), in source order; not those
    inside the functions in `skip` (by id), which are followed where they are called."""
    calls: list[tuple[ast.Call, str]] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in skip:
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Call):
            calls.append((n.value, ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target)))
        elif isinstance(n, ast.Call):
            calls.append((n, ""))
        todo.extend(ast.iter_child_nodes(n))
    return sorted(calls, key=lambda c: (c[0].lineno, c[0].col_offset, c[1] == ""))


def _helpers(mod: Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions followed where they are called: those that add arguments or parsers to a parameter
    (`def add_common(p): p.add_argument(...)`, `def add_list(subparsers): subparsers.add_parser(...)`), and those
    that return a parser they make (`def build_parser(): ...; return parser`); methods too, as `self.NAME`."""
    found = {}
    methods = [
        (f"self.{f.name}", f)
        for c in mod.classes.values()
        for f in c.body
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for name, fn in [*mod.functions.items(), *methods]:
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        receivers = {
            ast.unparse(n.func.value)
            for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _BUILDS
        }
        returned = any(isinstance(n, ast.Return) and isinstance(n.value, ast.Name) for n in ast.walk(fn))
        if receivers & params or (returned and receivers):
            found[name] = fn
    return found


class _Reader:
    """Follows a script's statements in source order, tracking what each variable holds; helper functions are
    followed at each call, with their parameters bound to what the call passes."""

    def __init__(self, mod: Module) -> None:
        self.mod = mod
        self.parsers: list[tuple[str, _Parser]] = []  # every parser made, top-level or sub, with its variable
        self.parsed: set[int] = set()  # the parsers whose arguments are parsed (by id)
        self.untracked: list[str] = []
        self.helpers = _helpers(mod)
        self.followed: dict[str, _Object | None] = {}  # helpers followed, and what those without parameters return
        self.active: list[str] = []

    def body(self, node: ast.AST, objects: dict[str, _Object]) -> None:
        seen: set[int] = set()
        for call, target in _calls(node, {id(f) for f in self.helpers.values()}):
            if id(call) not in seen:
                seen.add(id(call))
                self.step(call, target, objects)

    def follow(self, call: ast.Call, name: str, objects: dict[str, _Object]) -> _Object | None:
        """Follow a helper function at a call of it: what it returns, when that is a parser or group."""
        fn = self.helpers[name]
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if name.startswith("self.") else 0 :]
        bound = {p: ast.unparse(a) for p, a in zip(params, call.args, strict=False)} | {
            k.arg: ast.unparse(k.value) for k in call.keywords if k.arg
        }
        local = {p: objects[v] for p, v in bound.items() if v in objects}
        if not bound and name in self.followed:  # made once: a second `build_parser()` gives the same parser
            return self.followed[name]
        if name in self.active or len(self.active) >= _DEPTH:
            self.untracked.append(f"{name}() called inside itself at line {call.lineno}")
            return None
        self.active.append(name)
        scope = {**{k: v for k, v in objects.items() if k not in bound}, **local}
        for stmt in fn.body:
            self.body(stmt, scope)
        self.active.pop()
        returns = [n.value.id for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)]
        result = next((scope[r] for r in returns if r in scope), None)
        self.followed[name] = result if not bound else self.followed.get(name)
        return result

    def helper(self, call: ast.Call) -> str:
        """The helper a call calls (`build_parser(...)`, `self.add_common(...)`), or ''."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            return f"self.{func.attr}" if f"self.{func.attr}" in self.helpers else ""
        return func.id if isinstance(func, ast.Name) and func.id in self.helpers else ""

    def step(self, call: ast.Call, target: str, objects: dict[str, _Object]) -> None:
        mod = self.mod
        func = mod.dotted(call.func)
        owner_name, _, method = func.rpartition(".")
        owner = objects.get(owner_name) or objects.get(
            ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else ""
        )
        inner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(inner, ast.Call) and self.helper(inner):
            owner = self.follow(inner, self.helper(inner), objects)  # build_parser().parse_args()
        if self.helper(call):
            made = self.follow(call, self.helper(call), objects)
            if made is not None and target:
                objects[target] = made
        elif func in ("argparse.ArgumentParser", "ArgumentParser"):
            listed = _listed(mod, mod.kwargs(call).get("parents"))
            for made_by in listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else []:
                made = self.follow(made_by, self.helper(made_by), objects) if isinstance(made_by, ast.Call) else None
                if isinstance(made, _Parser):  # parents=[common_parser()]
                    self.parsers.append((ast.unparse(made_by), made))
            parser = _parser_from(mod, call)
            self.parsers.append((target, parser))
            if target:
                objects[target] = parser
        elif isinstance(owner, (_Parser, _Group)):
            parser = owner if isinstance(owner, _Parser) else owner.parser
            if method == "add_argument" and mod.computed(call):
                self.untracked.append(f"{ast.unparse(call.func)} with computed names or options at line {call.lineno}")
            elif method == "add_argument":
                param = _param(mod, call)
                if param is not None:
                    _add(parser.params, param)
                    if isinstance(owner, _Group) and owner.exclusive is not None:
                        owner.exclusive.params.append(param.name)
            elif method == "add_argument_group" and target:
                objects[target] = _Group(parser)
            elif method == "add_mutually_exclusive_group":
                ex = Exclusive([], required=mod.literal(mod.kwargs(call).get("required")) is True)
                parser.exclusive.append(ex)
                if target:
                    objects[target] = _Group(parser, ex)
            elif method == "add_subparsers":
                parser.has_subparsers = True
                if target:
                    objects[target] = _Subparsers(parser)
            elif method in ("parse_args", "parse_known_args", "parse_intermixed_args"):
                self.parsed.add(id(parser))
        elif isinstance(owner, _Subparsers) and method == "add_parser" and call.args:
            name = string(mod.literal(call.args[0]))
            if name:
                child = _parser_from(mod, call, name)
                owner.parser.children.append(child)
                self.parsers.append((target, child))
                if target:
                    objects[target] = child
        elif method in ("add_argument", "add_parser", "add_mutually_exclusive_group") and owner is None:
            self.untracked.append(f"{ast.unparse(call.func)} at line {call.lineno}")


def read(mod: Module, launch: list[str]) -> tuple[Node | None, list[str]]:
    """The interface of an argparse script as a node (a group when it has subcommands), or None if none is found;
    its commands run `launch` followed by their subcommand words."""
    reader = _Reader(mod)
    objects: dict[str, _Object] = {}
    reader.body(mod.tree, objects)
    for name, fn in reader.helpers.items():  # never called: what it adds to its parameters cannot be followed
        if name not in reader.followed:
            reader.follow(ast.Call(ast.Name(name), [], [], lineno=fn.lineno), name, objects)
    parsers, untracked = reader.parsers, reader.untracked
    if not parsers:
        return None, []
    named = {t: p for t, p in parsers if t}
    untracked += [f"parents=[{name}]" for _, p in parsers for name in p.parents if name not in named]
    if untracked:  # a flag we could not see would be rejected although the script takes it
        where = untracked[0]
        return None, [f"arguments added where they cannot be followed statically ({where}); passing argv through"]
    used_as_parent = {id(named[name]) for _, p in parsers for name in p.parents}
    for _, p in parsers:
        _inherit(p, named, set())
    subs = {id(c) for _, p in parsers for c in p.children}
    tops = [(t, p) for t, p in parsers if id(p) not in used_as_parent | subs]
    root = next((p for _, p in tops if id(p) in reader.parsed), tops[0][1] if tops else parsers[0][1])
    warnings: list[str] = []
    return _to_node(root, launch, [], warnings), warnings


def _inherit(p: _Parser, named: dict[str, _Parser], seen: set[int]) -> None:
    """Put the arguments of `p`'s `parents=[...]` (theirs first, as argparse copies them) into `p`, once."""
    if id(p) in seen or not p.parents:
        return
    seen.add(id(p))
    params: list[Param] = []
    exclusive: list[Exclusive] = []
    merged: list[Param] = []
    for parent in (named[name] for name in p.parents):
        _inherit(parent, named, seen)
        params += parent.params
        exclusive += parent.exclusive
    for q in params + p.params:
        _add(merged, q)
    p.params, p.exclusive, p.parents = merged, exclusive + p.exclusive, []


def _to_node(p: _Parser, command: list[str], above: list[_Parser], warnings: list[str]) -> Node:
    """`command`: what runs it, ending in its subcommand words; `above`: for each of those words, the parser in
    front of it (see `parents`)."""
    name = command_name(p.name) if p.name else ""
    if not p.children:
        cmd = Command(
            name=name,
            summary=p.summary,
            description=p.description if p.description != p.summary else "",
            params=p.params,
            exclusive=[e for e in p.exclusive if e.params],
            handler=SubprocessRef(command=command),
            aliases=p.aliases,
        )
        parents.inherit(cmd, [q.params for q in above], [e for q in above for e in q.exclusive])
        return cmd
    positionals = [q.name for q in p.params if q.positional and q.required]
    if positionals:
        names = ", ".join(positionals)
        warnings.append(f"arguments before the subcommand ({names}) cannot be modelled; passing argv through")
        return Command(
            name=name,
            summary=p.summary,
            description=p.description,
            handler=SubprocessRef(command=command),
            passthrough=True,
        )
    unmovable = [q.flags[0] if q.flags else q.name for q in p.params if not parents.movable(q)]
    if unmovable:
        warnings.append(f"arguments before the subcommand ({', '.join(unmovable)}) are not exposed")
    children = [_to_node(c, command + [c.name], above + [p], warnings) for c in p.children]
    return Group(name=name, summary=p.summary, description=p.description, children=children)
