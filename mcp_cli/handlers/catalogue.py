"""Wrapped servers' resources and prompts: the commands that list, read and get them (`mcp` references with an
`op`), and the `Catalogue` that serves them all as one server's, with names and URIs unique across servers.

Naming: a prompt keeps its name unless another server has one so named; then every such prompt is `SERVER_NAME`
(SERVER the config key). A resource URI is kept unless another server lists the same URI or has a template that
fits it, and a template unless another server has one with the same fixed start (before its first `{`); then it is
`SERVER+URI` (`SERVER+TEMPLATE`). A URI a tool returns (a resource link, an embedded resource) gets the same
treatment, so reading it reaches the server that made it. On the way in, `SERVER+URI` goes to SERVER; a plain URI to
the one server that lists it or has a template for it, else to the one server that has resources at all.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import HandlerError, NotFound
from ..refs import McpOpRef
from ..result import Result
from ..tree import Command, Tree
from .base import Call
from .pages import LISTS, dump, listed

if TYPE_CHECKING:
    from mcp.shared.uri_template import UriTemplate

    from .upstream import Upstreams

log = logging.getLogger("mcp_cli")
SEP = "+"  # SERVER+URI
PROMPT_SEP = "_"  # SERVER_NAME


def _template(text: str) -> UriTemplate | None:
    from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

    try:
        return UriTemplate.parse(text)
    except InvalidUriTemplate:
        return None


def offered(tree: Tree) -> tuple[set[str], dict[str, list[str]], set[tuple[str, str]]]:
    """What a tree (a client's part of one) offers: the servers whose resources it reads (`resources read`), their
    templates, and its prompts as (server, name)."""
    readers: set[str] = set()
    templates: dict[str, list[str]] = {}
    prompts: set[tuple[str, str]] = set()
    for _, node in tree.walk():
        ref = node.handler if isinstance(node, Command) else None
        if isinstance(ref, McpOpRef):
            if ref.op == "resources/read":
                readers.add(ref.server)
                templates[ref.server] = list(ref.templates)
            elif ref.op == "prompts/get":
                prompts.add((ref.server, ref.prompt))
    return readers, templates, prompts


def unique(pairs: Iterable[tuple[str, str]], sep: str) -> dict[tuple[str, str], str]:
    """A name for each (server, name): the name itself, or `SERVER{sep}NAME` where servers share it (a clash left
    after that gets `-2`, `-3`, ...)."""
    pairs = sorted(set(pairs))
    count: dict[str, int] = {}
    for _, name in pairs:
        count[name] = count.get(name, 0) + 1
    named = {(s, n): n if count[n] == 1 else f"{s}{sep}{n}" for s, n in pairs}
    seen: set[str] = set()
    for pair in pairs:
        name, i = named[pair], 2
        while named[pair] in seen:
            named[pair], i = f"{name}-{i}", i + 1
        seen.add(named[pair])
    return named


class Catalogue:
    """The resources, templates and prompts of a tree's upstream servers under names unique across them, and the way
    back: which server, and what it calls the thing. It learns the URIs each server lists as they are listed."""

    def __init__(self, tree: Tree) -> None:
        self.listed: dict[str, set[str]] = {}
        self.adopt(tree)

    def adopt(self, tree: Tree) -> None:
        self.tree = tree
        self.readers, templates, prompts = offered(tree)
        self.templates = {s: [t for t in map(_template, ts) if t is not None] for s, ts in templates.items()}
        self.template_text = templates
        self.prompt_names = unique(prompts, PROMPT_SEP)
        self.prompts_back = {served: pair for pair, served in self.prompt_names.items()}

    # URIs

    def split(self, uri: str) -> tuple[str, str] | None:
        """(server, its URI) for `SERVER+URI`, SERVER a server with resources; else None."""
        head, sep, rest = uri.partition(SEP)
        return (head, rest) if sep and rest and head in self.readers else None

    def claimants(self, uri: str) -> set[str]:
        """The servers that list `uri` or have a template it fits."""
        found = {s for s, uris in self.listed.items() if uri in uris}
        return found | {s for s, ts in self.templates.items() if any(t.match(uri) is not None for t in ts)}

    def served_uri(self, server: str, uri: str) -> str:
        """How `server`'s `uri` is served: itself, or `SERVER+URI` when another server claims it too (or it reads as
        a prefixed URI)."""
        return f"{server}{SEP}{uri}" if self.claimants(uri) - {server} or self.split(uri) else uri

    def served_template(self, server: str, template: str) -> str:
        """A template, prefixed when another server has the same template or one with the same fixed start."""
        start = template.split("{", 1)[0]
        others = [t for s, ts in self.template_text.items() if s != server for t in ts]
        clash = any(t.split("{", 1)[0] == start for t in others) or self.split(template) is not None
        return f"{server}{SEP}{template}" if clash else template

    def route(self, uri: str, among: set[str]) -> tuple[str, str]:
        """The server (of `among`) that a served URI belongs to, and what that server calls it; NotFound if none."""
        split = self.split(uri)
        if split is not None:
            if split[0] not in among:
                raise NotFound(f"no resource {uri}: this client reads the resources of {', '.join(sorted(among))}.")
            return split
        claim = self.claimants(uri) & among
        if len(claim) > 1:
            ways = " or ".join(f"`{s}{SEP}{uri}`" for s in sorted(claim))
            raise NotFound(f"{uri} is a resource of several wrapped servers ({', '.join(sorted(claim))}); read {ways}.")
        if not claim and len(among) == 1:
            claim = set(among)
        if not claim:
            servers = ", ".join(sorted(among)) or "none"
            raise NotFound(
                f"no wrapped server is known to have {uri}; read a URI that resources/list, a template or "
                f"a tool gave, or SERVER{SEP}URI for one of: {servers}."
            )
        return claim.pop(), uri

    def passed(self, server: str, items: list[dict[str, Any]]) -> None:
        """Resource links and embedded resources in a server's tool result, their URIs as served (in place)."""
        for item in items:
            where = item if item.get("type") == "resource_link" else item.get("resource")
            if isinstance(where, dict) and isinstance(where.get("uri"), str):
                where["uri"] = self.served_uri(server, where["uri"])

    # serving

    async def gather(self, pool: Upstreams, servers: Iterable[str], op: str) -> dict[str, list[dict[str, Any]]]:
        """Each server's full list (`op` a list method), asked concurrently; a server that fails is left out (and
        logged), so that one broken server does not hide the others'."""
        found: dict[str, list[dict[str, Any]]] = {}

        async def one(server: str) -> None:
            try:
                found[server] = await pool.get(server).ask(lambda c: listed(c, op), self.timeout(server), op)
            except Exception as exc:
                log.warning("%s: upstream server `%s` left out: %s", op, server, exc)

        async with anyio.create_task_group() as tg:
            for server in sorted(servers):
                tg.start_soon(one, server)
        return found

    def timeout(self, server: str) -> float:
        return float(self.tree.upstreams.get(server, {}).get("timeout") or 0) or self.tree.settings.timeout

    async def resources(self, pool: Upstreams, among: set[str]) -> list[dict[str, Any]]:
        found = await self.gather(pool, among, "resources/list")
        for server, items in found.items():
            self.listed[server] = {str(r.get("uri")) for r in items}
        return [{**r, "uri": self.served_uri(s, r["uri"])} for s, items in found.items() for r in items]

    async def templates_of(self, pool: Upstreams, among: set[str]) -> list[dict[str, Any]]:
        found = await self.gather(pool, among, "resources/templates/list")
        return [
            {**t, "uriTemplate": self.served_template(s, t["uriTemplate"])} for s, items in found.items() for t in items
        ]

    async def read(self, pool: Upstreams, uri: str, among: set[str]) -> dict[str, Any]:
        server, upstream_uri = self.route(uri, among)
        result = await pool.get(server).ask(lambda c: c.read_resource(upstream_uri), self.timeout(server), uri)
        data = dump(result)
        for item in data.get("contents", []):
            if item.get("uri") == upstream_uri:
                item["uri"] = uri
        return data

    async def prompts(self, pool: Upstreams, among: set[tuple[str, str]]) -> list[dict[str, Any]]:
        found = await self.gather(pool, {s for s, _ in among}, "prompts/list")
        return [
            {**p, "name": self.prompt_names[(s, p["name"])]}
            for s, items in found.items()
            for p in items
            if (s, p["name"]) in among
        ]

    async def prompt(
        self, pool: Upstreams, name: str, arguments: dict[str, str] | None, among: set[tuple[str, str]]
    ) -> dict[str, Any]:
        pair = self.prompts_back.get(name)
        if pair is None or pair not in among:
            raise NotFound(f"no prompt named {name!r}; prompts/list gives the prompts.")
        server, upstream_name = pair
        result = await pool.get(server).ask(
            lambda c: c.get_prompt(upstream_name, arguments), self.timeout(server), f"prompt {name}"
        )
        return dump(result)


class OpHandler:
    """A command of a server's `resources` or `prompts` group: the MCP method `op` on that server's session."""

    def __init__(self, ref: McpOpRef, tree: Tree, pool: Upstreams | None, catalogue: Catalogue) -> None:
        self.server, self.op, self.prompt = ref.server, ref.op, ref.prompt
        self.pool, self.catalogue = pool, catalogue
        self.timeout = catalogue.timeout(self.server) if ref.timeout is None else float(ref.timeout)

    async def run(self, call: Call) -> Result:
        if self.pool is None:
            raise HandlerError(f"`{call.path}` asks an upstream server, which needs a running server (mcp-cli serve)")
        upstream = self.pool.get(self.server)
        if self.op == "resources/read":
            uri = str(call.values["uri"])
            own = self.catalogue.split(uri)
            uri = own[1] if own is not None and own[0] == self.server else uri
            read = await upstream.ask(lambda c: c.read_resource(uri), self.timeout, call.path)
            data = dump(read)  # text as text, for agents that read only that; a blob as an embedded resource
            items = [
                {"type": "text", "text": c["text"]} if "text" in c else {"type": "resource", "resource": c}
                for c in data.get("contents", [])
            ]
            return self.passed(items, data)
        if self.op == "prompts/get":
            arguments = {k: v if isinstance(v, str) else str(v) for k, v in call.values.items() if v is not None}
            got = await upstream.ask(lambda c: c.get_prompt(self.prompt, arguments), self.timeout, call.path)
            data = dump(got)
            lines = [got.description or ""] if got.description else []
            for message in data.get("messages", []):
                lines += [f"[{message.get('role')}]", as_text(message.get("content") or {})]
            return Result(ok=True, output="\n".join(lines) + "\n", data=data)
        items = await upstream.ask(lambda c: listed(c, self.op), self.timeout, call.path)
        return Result(ok=True, output=listing(self.op, items), data={LISTS[self.op][2]: items})

    def passed(self, content: list[dict[str, Any]], data: Any = None) -> Result:
        """Content items passed through (fitted to the answer's budget by the runtime)."""
        return Result(ok=True, output="\n".join(as_text(c) for c in content), content=content, data=data)


def listing(op: str, items: list[dict[str, Any]]) -> str:
    """A list of resources, templates or prompts as text, one per line: what to use, then what it is."""
    if not items:
        return f"None: the server lists no {LISTS[op][3]}.\n"
    lines = []
    for item in items:
        if op == "prompts/list":
            args = [
                f"--{a['name']}" + ("" if a.get("required") else " (optional)") for a in item.get("arguments") or []
            ]
            head = " ".join([item["name"], *args])
        else:
            head = str(item.get("uri") or item.get("uriTemplate"))
            head += f" ({item['mimeType']})" if item.get("mimeType") else ""
        about = " ".join(str(item.get("description") or item.get("title") or item.get("name") or "").split())
        lines.append(f"{head}  {about}".rstrip())
    return "\n".join(lines) + "\n"


def as_text(item: dict[str, Any]) -> str:
    """A content item as text for terminals: text itself, a placeholder line for anything else."""
    if item.get("type") == "text":
        return str(item["text"])
    resource = item.get("resource") or {}
    where = resource.get("uri") or item.get("uri") or ""
    mime = item.get("mimeType") or resource.get("mimeType") or ""
    label = " ".join(x for x in (item.get("type", "item"), mime, where) if x)
    return f"[{label}]" + (f"\n{resource['text']}" if resource.get("text") else "")
