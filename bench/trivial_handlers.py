"""Handlers of the trivial benchmark tree: the same answer from an async and a sync function."""


async def ping() -> str:
    return "pong"


def ping_sync() -> str:
    return "pong"
