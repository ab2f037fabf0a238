"""A crowded config, generated with a fixed seed: 500 tools from 70 MCP servers of many kinds, as a team that has
connected everything it uses would have.

The material is real where it can be: Boundary's 16 services and ProgressiveMCPBench's 15 servers whole, and as
many of GitHub's own server's tools as make 500 (as `github-work`, a look-alike of Boundary's `github`). The other
servers are generated from a table of kinds (calendars, CRM, databases, file storage, web search, chat, mail,
monitoring, payments, CI, support, ...), each with its own naming style (snake case, camel case, a prefix). Like
real configs, some servers have config keys that say nothing (`server1`, `mcp`, `tools-prod`), some tools have no
description, and two servers describe their tools in Chinese. A task is one tool, named by its tool name.
"""

from __future__ import annotations

import random
from typing import Any

from .corpora import SEED, Corpus, boundary, github, progressive

TOOLS, SERVERS = 500, 70
POOR_KEYS = ("server1", "server2", "mcp", "tools-prod", "srv", "local", "my-mcp", "remote-2")
# kind: (config keys, [(noun, verbs)])
KINDS: dict[str, tuple[tuple[str, ...], list[tuple[str, str]]]] = {
    "calendar": (
        ("google-calendar", "outlook-calendar", "caldav"),
        [("event", "list get create update delete"), ("calendar", "list"), ("free_busy", "get")],
    ),
    "CRM": (
        ("hubspot", "salesforce", "pipedrive"),
        [("contact", "list get create update"), ("deal", "list create update"), ("company", "search get")],
    ),
    "database": (
        ("postgres", "mysql", "sqlite", "mongodb"),
        [("table", "list describe"), ("query", "run explain"), ("schema", "list")],
    ),
    "file storage": (
        ("gdrive", "dropbox", "box"),
        [("file", "list get upload download delete search"), ("folder", "create"), ("link", "share")],
    ),
    "web search": (("brave-search", "tavily", "exa"), [("web", "search"), ("news", "search"), ("page", "fetch")]),
    "chat": (
        ("discord", "teams", "mattermost"),
        [("message", "send list delete"), ("channel", "list create"), ("reaction", "add")],
    ),
    "mail": (("gmail", "outlook-mail"), [("email", "send search read"), ("draft", "create"), ("label", "list")]),
    "error monitoring": (
        ("sentry", "rollbar"),
        [("error", "list get resolve"), ("release", "list"), ("project", "list")],
    ),
    "payments": (
        ("stripe", "paypal"),
        [("customer", "list create"), ("invoice", "list create send"), ("refund", "create")],
    ),
    "maps": (("google-maps", "mapbox"), [("place", "search get"), ("directions", "get"), ("address", "geocode")]),
    "weather": (("openweather",), [("forecast", "get"), ("current_weather", "get"), ("weather_alert", "list")]),
    "CI": (
        ("circleci", "jenkins", "buildkite"),
        [("pipeline", "list trigger"), ("job", "get cancel"), ("artifact", "list")],
    ),
    "help desk": (
        ("zendesk", "intercom", "freshdesk"),
        [("ticket", "list get create update"), ("conversation", "list reply")],
    ),
    "design": (("figma",), [("file", "get"), ("comment", "list post"), ("component", "list")]),
    "product analytics": (("posthog", "mixpanel"), [("event", "query"), ("funnel", "get"), ("cohort", "list")]),
    "CMS": (("wordpress", "contentful"), [("post", "list create update"), ("page", "list"), ("media", "upload")]),
    "to-do": (("todoist", "asana", "trello"), [("task", "list create complete update"), ("project", "list")]),
    "notes": (("obsidian", "evernote"), [("note", "search get create update"), ("tag", "list")]),
    "translation": (("deepl",), [("text", "translate"), ("language", "list"), ("glossary", "create")]),
    "browser": (
        ("puppeteer", "browserbase"),
        [("page", "navigate"), ("screenshot", "take"), ("element", "click fill")],
    ),
    "git": (("git",), [("status", "show"), ("commit", "create list"), ("branch", "create checkout"), ("diff", "show")]),
    "vector search": (("qdrant", "pinecone"), [("collection", "list create"), ("point", "upsert search")]),
    "knowledge graph": (("memory",), [("entity", "create delete search"), ("relation", "create"), ("graph", "read")]),
    "secrets": (("vault", "1password"), [("secret", "read write list delete")]),
    "DNS and CDN": (("cloudflare",), [("zone", "list"), ("dns_record", "list create delete"), ("cache", "purge")]),
    "hosting": (("vercel", "netlify"), [("deployment", "list get create"), ("project", "list"), ("domain", "add")]),
    "spreadsheet": (("google-sheets", "airtable"), [("record", "list create update"), ("table", "list")]),
    "video": (("youtube",), [("video", "search get"), ("transcript", "get"), ("playlist", "list")]),
    "social": (("reddit", "mastodon"), [("post", "search create"), ("comment", "list create"), ("user", "get")]),
    "online shop": (("shopify",), [("product", "list create update"), ("order", "list get"), ("inventory", "adjust")]),
    "smart home": (("home-assistant",), [("device", "list"), ("light", "toggle"), ("automation", "trigger")]),
}
CHINESE = {  # servers whose tools are described in Chinese, as some are
    "feishu": [("document", "create get search"), ("message", "send"), ("chat", "list")],
    "dingtalk": [("message", "send"), ("approval", "list create"), ("contact", "search")],
}
_ZH_VERBS = {"create": "创建", "get": "获取", "search": "搜索", "send": "发送", "list": "列出"}
_ZH_NOUNS = {"document": "云文档", "message": "消息", "chat": "群聊", "approval": "审批实例", "contact": "通讯录联系人"}
_PARAMS = {
    "list": {
        "limit": {"type": "integer", "description": "How many to return."},
        "cursor": {"type": "string", "description": "Where the previous page ended."},
    },
    "search": {
        "query": {"type": "string", "description": "What to look for."},
        "limit": {"type": "integer", "description": "How many results."},
    },
    "create": {
        "name": {"type": "string", "description": "Its name or title."},
        "body": {"type": "string", "description": "Its content."},
    },
}


def _name(style: int, prefix: str, verb: str, noun: str) -> str:
    """A tool name in one of the styles servers use: `list_events`, `listEvents`, `stripe_list_events`."""
    if style == 1:
        return verb + "".join(w.title() for w in noun.split("_"))
    return (f"{prefix}_" if style == 2 else "") + f"{verb}_{noun}"


def _tool(name: str, verb: str, noun: str, description: str) -> dict[str, Any]:
    props = _PARAMS.get(verb) or {"id": {"type": "string", "description": f"The {noun.replace('_', ' ')}'s id."}}
    required = [p for p in props if p in ("id", "query", "name")]
    tool = {"name": name, "description": description, "inputSchema": {"type": "object", "properties": props}}
    if required:
        tool["inputSchema"]["required"] = required
    return tool


def _generated(rng: random.Random) -> list[tuple[str, list[dict[str, Any]]]]:
    servers = []
    for kind, (keys, nouns) in KINDS.items():
        for key in keys:
            style, product = rng.randrange(3), key.replace("-", " ").title()
            tools = [
                _tool(
                    _name(style, key.split("-")[0], verb, noun),
                    verb,
                    noun,
                    f"{verb.title()} {noun.replace('_', ' ')}s in {product} ({kind}).",
                )
                for noun, verbs in nouns
                for verb in verbs.split()
            ]
            servers.append((key, tools))
    for key, nouns in CHINESE.items():
        tools = [
            _tool(f"{verb}_{noun}", verb, noun, f"{_ZH_VERBS[verb]}{_ZH_NOUNS[noun]}。")
            for noun, verbs in nouns
            for verb in verbs.split()
        ]
        servers.append((key, tools))
    return servers


def crowded(seed: int = SEED) -> Corpus:
    """The 70-server, 500-tool config (see the module docstring): the same servers, names and tools for a seed."""
    rng = random.Random(seed)
    real = boundary().servers + progressive().servers
    made = _generated(rng)
    made = rng.sample(made, SERVERS - len(real) - 1)
    servers = real + made
    rest = TOOLS - sum(len(tools) for _, tools in servers)
    servers.append(("github-work", rng.sample(github().tools, rest)))
    for tool in rng.sample([t for _, tools in made for t in tools], len(made) // 2):
        tool["description"] = ""  # tools without a description
    renamed = dict(zip(rng.sample([key for key, _ in servers], len(POOR_KEYS)), POOR_KEYS, strict=True))
    servers = [(renamed.get(key, key), tools) for key, tools in servers]
    rng.shuffle(servers)
    tasks = [(t["name"], [(s, t["name"])]) for s, tools in servers for t in tools]
    return Corpus("crowded-70", servers, tasks)
