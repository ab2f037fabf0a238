"""Reading Python source without running it: import aliases, dotted call names, literal values."""

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
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = self.literal(node.value)
                if value is not UNKNOWN:
                    self.constants[node.targets[0].id] = value
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node

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
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("range",) and not node.keywords:
            args = [self.literal(a) for a in node.args]
            if all(isinstance(a, int) for a in args) and len(range(*args)) <= 100:
                return list(range(*args))
            return UNKNOWN
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("textwrap.dedent", "dedent") and node.args:
            import textwrap

            text = self.literal(node.args[0])
            return textwrap.dedent(text) if isinstance(text, str) else UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return UNKNOWN
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
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


def string(value: object) -> str:
    return value if isinstance(value, str) else ""
