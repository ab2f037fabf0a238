"""Reading Python source without running it: import aliases, dotted call names, literal values.

A value is read from the syntax tree alone, never by running the script: literals, module-level constants (a name
assigned once at module level, to a value that can be read, and not changed in place there), and a few pure
expressions over them that scripts use for choices and defaults (`list(FORMATS)`, `sorted(X)`, `X.keys()`,
`tuple(X.values())`, `X["key"]`, `A + B`, `range(3)`, an f-string of those). Anything else is UNKNOWN.
"""

from __future__ import annotations

import ast
from typing import Any


class _Unknown:
    """What `Module.literal` gives for an expression whose value cannot be read statically."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


class Module:
    """A parsed script: its syntax tree, import aliases and module-level literal constants."""

    def __init__(self, source: str, filename: str = "<script>") -> None:
        self.tree = ast.parse(source, filename=filename)
        self.docstring = ast.get_docstring(self.tree) or ""
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, Any] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        changed = _changed(self.tree.body)
        for node in self.tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
                target = node.target if isinstance(node, ast.AnnAssign) else target
                if isinstance(target, ast.Name) and target.id not in changed and node.value is not None:
                    value = self.literal(node.value)
                    if value is not UNKNOWN:
                        self.constants[target.id] = value
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node

    def dotted(self, node: ast.AST) -> str:
        """`argparse.ArgumentParser`, `parser.add_argument`, `click.option`: imports resolved to full names."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):  # chained: click.Choice(...).x
            return ""
        if not isinstance(node, ast.Name):
            return ""
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def literal(self, node: ast.AST | None) -> Any:
        """The value of a literal expression, a module constant, or `__doc__`; UNKNOWN otherwise."""
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Name):
            if node.id == "__doc__":
                return self.docstring
            return self.constants.get(node.id, UNKNOWN)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.literal(e) for e in node.elts]
            return UNKNOWN if any(i is UNKNOWN for i in items) else items
        pure = _PURE.get(self.dotted(node.func)) if isinstance(node, ast.Call) else None
        if pure is not None and isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
            return pure(self.literal(node.args[0]))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args + node.keywords:
            mapping = self.literal(node.func.value)
            if isinstance(mapping, dict) and node.func.attr in ("keys", "values", "items"):
                return [list(x) if isinstance(x, tuple) else x for x in getattr(mapping, node.func.attr)()]
            return UNKNOWN
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):  # DEFAULTS["dpi"], SIZES[0]
            container, key = self.literal(node.value), self.literal(node.slice)
            try:
                return container[key] if isinstance(container, (dict, list, tuple, str)) else UNKNOWN
            except (KeyError, IndexError, TypeError):
                return UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.BitOr)):
            return _operate(node.op, self.literal(node.left), self.literal(node.right))
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("range",) and not node.keywords:
            args = [self.literal(a) for a in node.args]
            if all(isinstance(a, int) for a in args) and len(range(*args)) <= 100:
                return list(range(*args))
            return UNKNOWN
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("textwrap.dedent", "dedent") and node.args:
            import textwrap

            text = self.literal(node.args[0])
            return textwrap.dedent(text) if isinstance(text, str) else UNKNOWN
        if isinstance(node, ast.JoinedStr):  # f"cap (default {LIMIT})" over constants
            parts = [self._formatted(v) for v in node.values]
            return UNKNOWN if any(p is UNKNOWN for p in parts) else "".join(parts)
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return UNKNOWN

    def _formatted(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return str(node.value)
        if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
            value = self.literal(node.value)
            return UNKNOWN if value is UNKNOWN else str(value)
        return UNKNOWN

    def computed(self, call: ast.Call) -> bool:
        """Whether a call's names are computed or its options unknown: `add_argument('--' + name)`, `*flags`,
        `**options`."""
        return any(k.arg is None for k in call.keywords) or not all(isinstance(self.literal(a), str) for a in call.args)

    def kwargs(self, call: ast.Call) -> dict[str, ast.expr]:
        return {k.arg: k.value for k in call.keywords if k.arg}

    def name_arg(self, call: ast.Call) -> str:
        """The name a decorator call gives (`@app.command("list")` or `name="list"`), or ''."""
        return string(self.literal(call.args[0] if call.args else self.kwargs(call).get("name")))

    def has_main_guard(self) -> bool:
        for node in self.tree.body:
            test = ast.unparse(node.test) if isinstance(node, ast.If) else ""
            if "__name__" in test and "__main__" in test:
                return True
        return False

    def top_level_calls(self) -> list[str]:
        """Dotted names of calls made by module-level statements (outside functions and classes)."""
        names = []
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    names.append(self.dotted(node.func))
        return names

    def main_calls(self) -> list[str]:
        """Dotted names of calls inside `if __name__ == "__main__":`."""
        out = []
        for node in self.tree.body:
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                out += [self.dotted(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)]
        return out


def _sequence(value: Any, order: bool = False) -> Any:
    """`list(x)`, `tuple(x)`, `set(x)`, `sorted(x)` of a read value (a dict gives its keys), as a list; UNKNOWN when
    it cannot be."""
    if isinstance(value, (dict, list, tuple, set, frozenset, str)):
        items = list(value)
        if order or isinstance(value, (set, frozenset)):
            try:
                return sorted(items)
            except TypeError:
                return UNKNOWN if order else items
        return items
    return UNKNOWN


_PURE: dict[str, Any] = {
    "list": _sequence,
    "tuple": _sequence,
    "set": _sequence,
    "frozenset": _sequence,
    "sorted": lambda v: _sequence(v, order=True),
}


_MOST = 10_000  # items, characters or bits a value read from a script may have


def _operate(op: ast.operator, left: Any, right: Any) -> Any:
    """`left op right` for read numbers, strings, lists and tuples (and `|` of dicts or sets); UNKNOWN otherwise, and
    for a result over _MOST (a script cannot make the reader build a huge value)."""
    numbers = (int, float)
    result: Any = UNKNOWN
    try:
        if isinstance(op, ast.BitOr) and type(left) is type(right) and isinstance(left, (dict, set, frozenset)):
            result = left | right
        elif isinstance(op, ast.Mult) and isinstance(left, (str, list, tuple)) and isinstance(right, int):
            result = left * right if len(left) * right <= _MOST else UNKNOWN
        elif isinstance(left, numbers) and isinstance(right, numbers) and not isinstance(op, ast.BitOr):
            small = all(not isinstance(v, int) or v.bit_length() <= _MOST // 2 for v in (left, right))
            result = (
                (
                    left * right
                    if isinstance(op, ast.Mult)
                    else left + right
                    if isinstance(op, ast.Add)
                    else left - right
                )
                if small
                else UNKNOWN
            )
        elif isinstance(op, ast.Add) and isinstance(left, (str, list, tuple)) and type(left) is type(right):
            result = left + right  # type: ignore[operator]
    except TypeError:
        return UNKNOWN
    sized = isinstance(result, (str, list, tuple, dict, set, frozenset))
    return UNKNOWN if sized and len(result) > _MOST else result


def _changed(body: list[ast.stmt]) -> set[str]:
    """Names that module-level code assigns more than once or changes in place (`X[k] = v`, `X += ...`,
    `X.append(...)`): not constants."""
    seen: set[str] = set()
    changed: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        (changed if n.id in seen or not isinstance(target, ast.Name) else seen).add(n.id)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            changed.add(stmt.target.id)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in _MUTATORS:
                changed.add(func.value.id)
        elif isinstance(stmt, (ast.For, ast.With, ast.If, ast.Try, ast.While)):
            changed |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return changed


_MUTATORS = {"append", "extend", "insert", "update", "add", "remove", "pop", "clear", "setdefault", "discard", "sort"}


# What help says of a choice list or default that the script computes (they pass to it unchecked).
COMPUTED_CHOICES = "choices computed by the script, passed to it unchecked"
COMPUTED_DEFAULT = "default computed by the script"


def choice_list(value: Any) -> list[Any] | None:
    """Choices as a list (a dict's keys, a set sorted), or None when there are none or they could not be read."""
    listed = _sequence(value) if isinstance(value, (dict, list, tuple, set, frozenset)) else UNKNOWN
    return listed if isinstance(listed, list) and listed else None


def noted(help_text: str, *notes: str) -> str:
    """A parameter's help with notes (in brackets) about what was not read: `Engine (choices computed ...)`."""
    shown = [n for n in notes if n]
    return " ".join(x for x in (help_text, f"({'; '.join(shown)})" if shown else "") if x)


def string(value: object) -> str:
    return value if isinstance(value, str) else ""
