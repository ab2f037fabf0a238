"""typer interfaces read from the syntax tree: apps, commands, sub-apps, and parameters from signatures.

The options of an app's callback are accepted by every command below it (see `parents`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ...refs import SubprocessRef
from ...text import command_name
from ...tree import Command, Group, Node, Param
from . import parents
from .pyast import COMPUTED_DEFAULT, UNKNOWN, Module, noted, string

_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "Path": "path", "pathlib.Path": "path"}
_SKIP_TYPES = ("typer.Context", "Context", "click.Context")

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class _App:
    """A `typer.Typer()` of the script: its help, its commands (function, name, help), the apps added to it
    (variable, name, help) and its callback."""

    help: str
    commands: list[tuple[Function, str, str]] = field(default_factory=list)
    subapps: list[tuple[str, str, str]] = field(default_factory=list)
    callback: Function | None = None


def _unwrap(mod: Module, ann: ast.AST | None) -> tuple[ast.AST | None, ast.Call | None, bool]:
    """(inner type, typer.Option/Argument call inside Annotated, is a list)."""
    info, is_list = None, False
    while True:
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # X | None
            ann = ann.right if isinstance(ann.left, ast.Constant) and ann.left.value is None else ann.left
            continue
        if not isinstance(ann, ast.Subscript):
            break
        outer = mod.dotted(ann.value)
        if outer.endswith("Annotated") and isinstance(ann.slice, ast.Tuple):
            elts = ann.slice.elts
            calls = [e for e in elts[1:] if isinstance(e, ast.Call) and mod.dotted(e.func).startswith("typer.")]
            info = calls[0] if calls else info
            ann = elts[0]
        elif outer.endswith("Optional"):
            ann = ann.slice
        elif outer.split(".")[-1] in ("List", "list", "Sequence", "Tuple", "tuple", "Set", "set"):
            is_list = True
            ann = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
        else:
            break
    return ann, info, is_list


def _enum_values(mod: Module, name: str) -> list[Any] | None:
    cls = mod.classes.get(name)
    if cls is None or not any("Enum" in mod.dotted(b) for b in cls.bases):
        return None
    values = [mod.literal(s.value) for s in cls.body if isinstance(s, ast.Assign)]
    return [v for v in values if v is not UNKNOWN] or None


def _param(mod: Module, arg: ast.arg, default: ast.AST | None) -> Param | None:
    type_node, info, is_list = _unwrap(mod, arg.annotation)
    type_name = mod.dotted(type_node) if type_node is not None else "str"
    if type_name in _SKIP_TYPES:
        return None
    if isinstance(default, ast.Call) and mod.dotted(default.func) in ("typer.Option", "typer.Argument"):
        info, default = default, (default.args[0] if default.args else None)
        if info.args:
            default = info.args[0]
            decl_nodes = info.args[1:]
        else:
            default = mod.kwargs(info).get("default")
            decl_nodes = []
    else:
        decl_nodes = [a for a in info.args if isinstance(mod.literal(a), str)] if info is not None else []
    is_option = (mod.dotted(info.func) == "typer.Option") if info is not None else default is not None
    kw = {k: mod.literal(v) for k, v in mod.kwargs(info).items()} if info is not None else {}
    value = mod.literal(default) if default is not None else UNKNOWN
    computed = COMPUTED_DEFAULT if value is UNKNOWN and default is not None else ""
    required = default is None or value is Ellipsis
    value = None if value in (UNKNOWN, Ellipsis) else value
    ptype = _TYPES.get(type_name, "string")
    choices = _enum_values(mod, type_name)
    if choices and isinstance(default, ast.Attribute) and mod.dotted(default.value) == type_name:
        member = next(
            (
                a
                for a in mod.classes[type_name].body
                if isinstance(a, ast.Assign) and ast.unparse(a.targets[0]) == default.attr
            ),
            None,
        )
        value, computed = mod.literal(member.value) if member is not None else None, ""
    help_text = noted(" ".join(string(kw.get("help")).split()), computed)
    if not is_option:
        nargs = ("+" if required else "*") if is_list else None
        return Param(
            name=arg.arg,
            type=ptype,
            help=help_text,
            required=required and not is_list or nargs == "+",
            default=value,
            choices=choices,
            nargs=nargs,
        )
    decls = [mod.literal(d) for d in decl_nodes]
    decls = [d for d in decls if isinstance(d, str)]
    flags, negatable = [], ptype == "boolean"
    for d in decls:
        first = d.split("/")[0].strip()
        flags += [f.strip() for f in first.split(",")]
        if ptype == "boolean" and "/" not in d:
            negatable = False
    flags = flags or ["--" + arg.arg.replace("_", "-")]
    if ptype == "boolean":
        action = "negatable" if negatable else "store_true"
        value = None if value is False and action == "store_true" else value
    else:
        action = "append" if is_list else "store"
    return Param(
        name=arg.arg,
        type=ptype,
        flags=flags,
        help=help_text,
        required=required,
        default=value,
        choices=choices,
        action=action,
    )


def _command(mod: Module, fn: Function, name: str, help_text: str) -> Command:
    args = fn.args.args + fn.args.kwonlyargs
    defaults: list[ast.AST | None] = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults)
    defaults += list(fn.args.kw_defaults)
    params = [p for a, d in zip(args, defaults, strict=True) if (p := _param(mod, a, d)) is not None]
    doc = (help_text or ast.get_docstring(fn) or "").split("\f")[0].strip()
    summary = doc.split("\n\n")[0]
    return Command(
        name=name, summary=" ".join(summary.split()), description=doc if doc != summary else "", params=params
    )


def read(mod: Module, launch: list[str]) -> tuple[Node | None, list[str]]:
    """The interface of a typer script, or None when it defines no typer app or `typer.run`; its commands run
    `launch` followed by their subcommand words."""
    apps: dict[str, _App] = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if mod.dotted(node.value.func) == "typer.Typer":
                kw = mod.kwargs(node.value)
                apps[ast.unparse(node.targets[0])] = _App(string(mod.literal(kw.get("help"))))
    functions = {n.name: n for n in mod.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for fn in functions.values():
        for deco in fn.decorator_list:
            call = deco if isinstance(deco, ast.Call) else ast.Call(func=deco, args=[], keywords=[])
            owner, _, method = mod.dotted(call.func).rpartition(".")
            if owner in apps and method == "command":
                name = mod.name_arg(call)
                help_text = string(mod.literal(mod.kwargs(call).get("help")))
                apps[owner].commands.append((fn, name or command_name(fn.name), help_text))
            elif owner in apps and method == "callback":
                apps[owner].callback = fn
    for call in (n for n in ast.walk(mod.tree) if isinstance(n, ast.Call)):
        func = mod.dotted(call.func)
        owner, _, method = func.rpartition(".")
        if method == "add_typer" and owner in apps and call.args:
            sub = ast.unparse(call.args[0])
            kw = mod.kwargs(call)
            if sub in apps:
                apps[owner].subapps.append(
                    (sub, string(mod.literal(kw.get("name"))) or command_name(sub), string(mod.literal(kw.get("help"))))
                )
        elif func == "typer.run" and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id in functions:
            cmd = _command(mod, functions[call.args[0].id], command_name(call.args[0].id), "")
            cmd.handler = SubprocessRef(command=launch)
            return cmd, []
    if not apps:
        return None, []
    children = {s for a in apps.values() for s, _, _ in a.subapps}
    roots = [a for a in apps if a not in children]
    invoked = [c.split(".")[0] for c in mod.main_calls() + mod.top_level_calls()]
    root = next((r for r in roots if r in invoked), roots[0] if roots else next(iter(apps)))
    return _app(mod, apps, root, "", "", launch, set(), []), []


def _app(
    mod: Module,
    apps: dict[str, _App],
    key: str,
    name: str,
    help_text: str,
    command: list[str],
    seen: set[str],
    above: list[list[Param]],
) -> Node:
    """An app as a group (or, at the top, with one command and no callback, that command). `command`: what runs
    the app, ending in its subcommand words; `above`: the options of the callbacks of the apps it is in, one list
    per subcommand word (see `parents`)."""
    app = apps[key]
    seen.add(key)
    doc = help_text or app.help or (ast.get_docstring(app.callback) or "" if app.callback else "")
    if not above and len(app.commands) == 1 and not app.subapps and app.callback is None:
        fn, cname, chelp = app.commands[0]
        cmd = _command(mod, fn, name or cname, chelp)
        cmd.handler = SubprocessRef(command=command)
        return cmd
    own = _command(mod, app.callback, "", "").params if app.callback else []
    group = Group(name=name, summary=" ".join(doc.split("\n\n")[0].split()), description="")
    for fn, cname, chelp in app.commands:
        cmd = _command(mod, fn, command_name(cname), chelp)
        cmd.handler = SubprocessRef(command=command + [cname])
        parents.inherit(cmd, above + [own], [])
        group.children.append(cmd)
    for sub, sname, shelp in app.subapps:
        if sub not in seen:
            group.children.append(
                _app(mod, apps, sub, command_name(sname), shelp, command + [sname], seen, above + [own])
            )
    return group
