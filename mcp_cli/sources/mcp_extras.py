"""A wrapped server's resources and prompts in its group, for clients that only call tools and for `mcp-cli run`.

A server that declares resources and lists some (or templates) gets a `resources` group (`list`, `templates`,
`read URI`); one that declares prompts and lists some gets a `prompts` group (`list`, and `get NAME --ARG VALUE`, a
command per prompt whose options are its arguments). A group is named `resources` (`prompts`) unless a tool or
toolset of the server is already named so (by its name or its original name); then the first free of
`mcp-resources`, `mcp-resources-2`, ... Their handlers are `mcp` references with an `op`, the MCP method they call
(see `handlers/catalogue.py`).
"""

from __future__ import annotations

from typing import Any

from ..engine import schema
from ..refs import McpOpRef
from ..text import command_name, named, one_line
from ..tree import Command, Group, Node, Param

READ_ONLY = {"readOnlyHint": True}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def free_name(wanted: str, children: list[Node]) -> str:
    """`wanted`, or the first of `mcp-WANTED`, `mcp-WANTED-2`, ... that no child has as a name or an alias."""
    taken = {n for c in children for n in (c.name, *c.aliases)}
    candidates = [wanted, f"mcp-{wanted}"] + [f"mcp-{wanted}-{i}" for i in range(2, len(taken) + 3)]
    return next(c for c in candidates if c not in taken)


def _op(ref: McpOpRef, name: str, summary: str, **more: Any) -> Command:
    return Command(name=name, summary=summary, handler=ref, annotations=dict(READ_ONLY), **more)


def resources_group(server: str, listing: dict[str, Any], name: str) -> Group:
    resources, templates = listing.get("resources", []), listing.get("resourceTemplates", [])
    patterns = [str(t["uriTemplate"]) for t in templates if t.get("uriTemplate")]
    shown = "".join(f"\n  {p}" for p in patterns[:8]) + ("\n  ..." if len(patterns) > 8 else "")
    read = _op(
        McpOpRef(server=server, op="resources/read", templates=patterns),
        "read",
        "Read a resource by its URI.",
        params=[
            Param(
                "uri",
                required=True,
                help="The resource's URI, from `list`, a template filled in (`templates`), or a link a tool returned.",
            )
        ],
        description="Read a resource by its URI." + (f" Templates of this server:{shown}" if shown else ""),
    )
    return Group(
        name=name,
        summary=f"The server's resources ({len(resources)} listed, {plural(len(templates), 'template')}): list, read.",
        children=[
            _op(
                McpOpRef(server=server, op="resources/list"), "list", "List the server's resources: URI, name and type."
            ),
            _op(
                McpOpRef(server=server, op="resources/templates/list"),
                "templates",
                "List its resource templates (URIs to fill in).",
            ),
            read,
        ],
    )


def prompt_command(server: str, prompt: dict[str, Any], taken: set[str]) -> Command:
    """A command that gets one prompt; its arguments are string options."""
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and a.get("name")]
    input_schema = {
        "type": "object",
        "properties": {a["name"]: {"type": "string", "description": a.get("description") or ""} for a in arguments},
        "required": [a["name"] for a in arguments if a.get("required")],
    }
    name = command_name(prompt["name"])
    if name in taken:
        name = next(f"{name}-{i}" for i in range(2, len(taken) + 3) if f"{name}-{i}" not in taken)
    taken.add(name)
    description = str(prompt.get("description") or prompt.get("title") or "").strip()
    return _op(
        McpOpRef(server=server, op="prompts/get", prompt=prompt["name"]),
        name,
        one_line(description) if description else f"The prompt {prompt['name']}.",
        description=description,
        params=schema.params(input_schema),
        schema=input_schema,
        aliases=[prompt["name"]] if prompt["name"] != name else [],
    )


def prompts_group(server: str, listing: dict[str, Any], name: str) -> Group:
    prompts = [p for p in listing.get("prompts", []) if isinstance(p, dict) and p.get("name")]
    taken: set[str] = set()
    commands: list[Node] = [prompt_command(server, p, taken) for p in prompts]
    names = named([c.name for c in commands], 6) or "none yet"
    get = Group(name="get", summary=f"Get a prompt, its arguments as options: {names}.", children=commands)
    return Group(
        name=name,
        summary=f"The server's prompts ({len(prompts)}): list, get NAME.",
        children=[
            _op(McpOpRef(server=server, op="prompts/list"), "list", "List the server's prompts and their arguments."),
            get,
        ],
    )


def extras(server: str, listing: dict[str, Any], children: list[Node]) -> list[Node]:
    """The `resources` and `prompts` groups of a server's listing (each only when the server declares it and lists
    some), named so that they never clash with `children`, the server's tools and toolsets."""
    found: list[Node] = []
    if listing.get("resources") or listing.get("resourceTemplates"):
        found.append(resources_group(server, listing, free_name("resources", children)))
    if listing.get("prompts"):
        found.append(prompts_group(server, listing, free_name("prompts", children)))
    return found
