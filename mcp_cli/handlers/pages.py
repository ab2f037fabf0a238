"""What an upstream session lists, every page of it (tools, resources, templates, prompts), as JSON: for the
catalogue of resources and prompts, and for the relay that tells clients what changed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

LISTS = {  # a list method: the client's method, the result's list (attribute; wire field), what it lists
    "resources/list": ("list_resources", "resources", "resources", "resources"),
    "resources/templates/list": (
        "list_resource_templates",
        "resource_templates",
        "resourceTemplates",
        "resource templates",
    ),
    "prompts/list": ("list_prompts", "prompts", "prompts", "prompts"),
}


async def listed(client: Any, op: str) -> list[dict[str, Any]]:
    """Everything a session lists for the list method `op`, every page."""
    method, attribute, _, _ = LISTS[op]
    return await every_page(getattr(client, method), attribute)


async def every_page(ask: Callable[..., Awaitable[Any]], attribute: str) -> list[dict[str, Any]]:
    """Every item of a paginated list (`client.list_tools`, ...; `attribute` names the result's list), as JSON."""
    items, cursor = [], None
    while True:
        page = await ask(cursor=cursor)
        items += [dump(x) for x in getattr(page, attribute)]
        cursor = page.next_cursor
        if not cursor:
            return items


def dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return data
