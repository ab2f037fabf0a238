"""click interfaces read from the syntax tree: groups, commands, arguments, options, flags, choices, multiple.

A group's own options are accepted by every command below it (see `parents`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ...refs import SubprocessRef
from ...text import command_name
from ...tree import Command, Group, Node, Param
from . import parents
from .pyast import COMPUTED_CHOICES, COMPUTED_DEFAULT, UNKNOWN, Module, choice_list, noted, string

_TYPES = {
    "int": "integer",
    "click.INT": "integer",
    "click.IntRange": "integer",
    "float": "number",
    "click.FLOAT": "number",
    "click.FloatRange": "number",
    "click.Path": "path",
    "click.File": "path",
    "pathlib.Path": "path",
    "Path": "path",
    "bool": "boolean",
    "click.BOOL": "boolean",
}


def click_name(func_name: str) -> str:
    """click's default command name: underscores to dashes, `_command`/`_cmd`/`_group`/`_grp` suffixes dropped."""
    name = re.sub(r"_(command|cmd|group|grp)$", "", func_name.lower()) or func_name.lower()
    return command_name(name)


def _type(mod: Module, node: ast.AST | None) -> tuple[str, list[Any] | None]:
    if node is None:
        return "string", None
    func = mod.dotted(node.func) if isinstance(node, ast.Call) else mod.dotted(node)
    if func == "click.Choice" and isinstance(node, ast.Call) and node.args:
        return "string", choice_list(mod.literal(node.args[0])) or [UNKNOWN]
    return _TYPES.get(func, "string"), None


def _param(mod: Module, deco: ast.Call, kind: str) -> Param | None:
    decls = [mod.literal(a) for a in deco.args]
    if not decls:
        return None
    kw = mod.kwargs(deco)
    lit = {k: mod.literal(v) for k, v in kw.items()}
    ptype, choices = _type(mod, kw.get("type"))
    default = lit.get("default", None)
    computed = (COMPUTED_CHOICES if choices == [UNKNOWN] else "", COMPUTED_DEFAULT if default is UNKNOWN else "")
    choices = None if choices == [UNKNOWN] else choices
    default = None if default is UNKNOWN else default
    help_text = noted(" ".join(string(lit.get("help")).split()), *computed)
    if kind == "argument":
        nargs = lit.get("nargs")
        required = lit.get("required", default is None and nargs != -1) is True
        return Param(
            name=decls[0].replace("-", "_"),
            type=ptype,
            help=help_text,
            required=required,
            default=default,
            choices=choices,
            nargs=("+" if required else "*")
            if nargs == -1
            else (nargs if isinstance(nargs, int) and nargs > 1 else None),
        )
    flags, negatable, name = [], False, ""
    for d in decls:
        if "/" in d and d.startswith("-"):
            flags.append(d.split("/")[0].strip())
            negatable = True
        elif d.startswith("-"):
            flags.append(d)
        elif d.isidentifier():
            name = d
    if not flags:
        return None
    long = next((f for f in flags if f.startswith("--")), flags[0])
    name = name or long.lstrip("-").replace("-", "_")
    action = "store"
    if negatable:
        action, ptype = "negatable", "boolean"
    elif lit.get("is_flag") is True or (ptype == "boolean" and "type" not in kw and isinstance(default, bool)):
        action, ptype = "store_true", "boolean"
        default = None if default in (False, None) else default
    elif lit.get("count") is True:
        action, ptype = "count", "integer"
    elif lit.get("multiple") is True:
        action = "append"
    required = lit.get("required") is True or ("prompt" in kw and default is None)
    nargs = lit.get("nargs")
    return Param(
        name=name,
        type=ptype,
        flags=flags,
        help=help_text,
        required=required,
        default=default,
        choices=choices,
        nargs=nargs if isinstance(nargs, int) and nargs > 1 else None,
        action=action,
        metavar=lit.get("metavar") if isinstance(lit.get("metavar"), str) else None,
    )


def read(mod: Module, launch: list[str]) -> tuple[Node | None, list[str]]:
    """The interface of a click script, or None when it defines no click command; its commands run `launch`
    followed by their subcommand words."""
    nodes: dict[str, Node] = {}
    raw: dict[int, str] = {}  # node -> the name click itself knows it by (the argv token)
    parent_of: dict[str, str] = {}
    group_params: dict[int, list[Param]] = {}  # a group's own options, read in front of its subcommand word
    order: list[str] = []
    for fn in [n for n in mod.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        kind, name, help_text, params, unknown = None, "", "", [], []
        for deco in fn.decorator_list:
            if not isinstance(deco, ast.Call):
                deco = ast.Call(func=deco, args=[], keywords=[])
            func = mod.dotted(deco.func)
            owner, _, method = func.rpartition(".")
            if method in ("command", "group") and (owner == "click" or owner in nodes):
                kind = method
                name = mod.name_arg(deco)
                help_text = string(mod.literal(mod.kwargs(deco).get("help")))
                if owner in nodes:
                    parent_of[fn.name] = owner
            elif func in ("click.option", "click.argument") and mod.computed(deco):
                unknown.append(f"@{func} with computed names or options on {fn.name}")
            elif func in ("click.option", "click.argument"):
                p = _param(mod, deco, method)
                if p is not None:
                    params.append(p)
            elif not func.startswith("click."):
                unknown.append(f"@{func or ast.unparse(deco.func)} on {fn.name}")
        if kind is None:
            continue
        if unknown:  # a decorator of its own may add options we cannot see; rejecting them would be worse
            return None, [f"{unknown[0]} may add options that cannot be read statically; passing argv through"]
        doc = (help_text or ast.get_docstring(fn) or "").split("\f")[0].strip()
        summary = doc.split("\n\n")[0]
        cname = name or click_name(fn.name)
        if kind == "group":
            nodes[fn.name] = Group(name=cname, summary=summary, description=doc if doc != summary else "")
            group_params[id(nodes[fn.name])] = params
        else:
            nodes[fn.name] = Command(
                name=cname, summary=summary, description=doc if doc != summary else "", params=params
            )
        raw[id(nodes[fn.name])] = cname
        nodes[fn.name].name = command_name(cname)
        order.append(fn.name)
    for call in (n for n in ast.walk(mod.tree) if isinstance(n, ast.Call)):
        func = mod.dotted(call.func)
        owner, _, method = func.rpartition(".")
        if method == "add_command" and owner in nodes and call.args and isinstance(call.args[0], ast.Name):
            child = call.args[0].id
            if child in nodes:
                parent_of[child] = owner
                alias = string(mod.literal(call.args[1])) if len(call.args) > 1 else ""
                if alias:
                    raw[id(nodes[child])], nodes[child].name = alias, command_name(alias)
    if not nodes:
        return None, []
    for fn_name in order:
        parent = nodes[parent_of[fn_name]] if fn_name in parent_of else None
        if isinstance(parent, Group):
            parent.children.append(nodes[fn_name])
    roots = [n for n in order if n not in parent_of]
    invoked = [c.split(".")[0] for c in mod.main_calls() + mod.top_level_calls()]
    root = next((r for r in roots if r in invoked), roots[0] if roots else order[0])
    warnings: list[str] = []
    _set_commands(nodes[root], launch, raw, group_params, [], warnings)
    return nodes[root], warnings


def _set_commands(
    node: Node,
    command: list[str],
    raw: dict[int, str],
    group_params: dict[int, list[Param]],
    above: list[list[Param]],
    warnings: list[str],
) -> None:
    """What runs each command (`command` and its subcommand words), and the options of the groups above it (see
    `parents`)."""
    if isinstance(node, Group):
        own = group_params[id(node)]
        unmovable = [q.flags[0] if q.flags else q.name for q in own if not parents.movable(q)]
        if unmovable:
            warnings.append(f"arguments of group {node.name!r} ({', '.join(unmovable)}) are not exposed")
        for child in node.children:
            _set_commands(child, command + [raw[id(child)]], raw, group_params, above + [own], warnings)
    elif isinstance(node, Command):
        node.handler = SubprocessRef(command=command)
        parents.inherit(node, above, [])
