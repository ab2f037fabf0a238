"""Where the next parts of cut answers are kept (`answers.py` cuts them): one small interface, `Store`, and three
stores behind it. `Memory` (a serving process: SECONDS, at most TOTAL characters, the least recently used dropped
first), `Files` (shell callers, a process a call: one file an answer in the user's cache folder) and `Redis` (replicas
of a `--stateless` server sharing one Redis or Valkey: `--answers-store redis://HOST:PORT/DB`, entries expiring after
SECONDS). An answer is readable by the session that got it (its context's key; None: by whoever has its id), and a
scope's answers only through that scope (`part`)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import anyio

from ..result import KEEP

log = logging.getLogger("mcp_cli")
SECONDS = 900.0  # how long an answer's next parts are kept
TOTAL = 64_000_000  # characters of kept answers a process holds in memory
ENV = "MCP_CLI_ANSWERS_STORE"  # the store a server keeps answers in, when no --answers-store is given
SCHEMES = ("redis", "rediss", "valkey", "valkeys", "unix")
INSTALL = "pip install 'mcp-cli-tree[redis]' (or pip install redis)"
CONNECT, READ = 2.0, 5.0  # seconds a Redis store may take to connect, and to answer


class NotKept(Exception):
    """Why an answer could not be kept or read: too big to keep, or the store could not be reached."""


@dataclass
class Entry:
    """A kept answer: its body (`answers.Body`; as JSON data when read from a file or Redis), the call that made it
    (without reserved options), who may read it (a session's key; None: whoever has its id), about how many tokens
    the whole is, and when it was kept."""

    body: Any
    call: list[str]
    owner: str | None
    tokens: int
    at: float = field(default_factory=time.time)

    @property
    def size(self) -> int:
        return int(sum(self.body.sizes))

    def dumps(self) -> str:
        body = (
            self.body
            if isinstance(self.body, dict)
            else {f.name: getattr(self.body, f.name) for f in fields(self.body)}
        )
        return json.dumps(
            {"body": body, "call": self.call, "owner": self.owner, "tokens": self.tokens, "at": self.at},
            ensure_ascii=False,
        )

    @classmethod
    def loads(cls, text: str | bytes) -> Entry | None:
        try:
            data = json.loads(text)
            return cls(data["body"], data["call"], data["owner"], data["tokens"], data["at"])
        except (ValueError, TypeError, KeyError):
            return None


class Store(Protocol):
    """Where kept answers live. `put` gives the new answer's id, or raises NotKept saying why not; `get` gives the
    answer `key` if it is still kept and `owner` may read it, else None (NotKept: the store cannot be reached);
    `part` is the store of one scope, whose answers no other scope reads."""

    async def put(self, entry: Entry) -> str: ...

    async def get(self, key: str, owner: str | None) -> Entry | None: ...

    def part(self, name: str) -> Store: ...


def new_key() -> str:
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")


def _keepable(entry: Entry, total: int = KEEP) -> None:
    if entry.size > min(KEEP, total):
        raise NotKept(f"it is too big to keep (over {min(KEEP, total):,} characters)")


def _readable(entry: Entry | None, owner: str | None, seconds: float) -> Entry | None:
    if entry is None or time.time() - entry.at > seconds or entry.owner not in (None, owner):
        return None
    return entry


class Memory:
    """Kept in this process: for `seconds`, at most `total` characters, the least recently used dropped first."""

    def __init__(self, seconds: float = SECONDS, total: int = TOTAL) -> None:
        self.seconds, self.total = seconds, total
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._size = 0

    async def put(self, entry: Entry) -> str:
        _keepable(entry, self.total)
        key = new_key()
        self._entries[key] = entry
        self._size += entry.size
        while self._size > self.total:
            self._size -= self._entries.popitem(last=False)[1].size
        return key

    async def get(self, key: str, owner: str | None) -> Entry | None:
        entry = _readable(self._entries.get(key), owner, self.seconds)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def part(self, name: str) -> Memory:
        return Memory(self.seconds, self.total)


class Files:
    """Kept as files of `folder` (readable by the user only), read by later processes; what expired goes when
    something new comes. A folder that cannot be written keeps nothing (the note says so)."""

    def __init__(self, folder: Path, seconds: float = SECONDS) -> None:
        self.folder, self.seconds = folder, seconds

    async def put(self, entry: Entry) -> str:
        _keepable(entry)
        key = new_key()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            now = time.time()
            for old in self.folder.glob("*.json"):
                if now - old.stat().st_mtime > self.seconds:
                    old.unlink(missing_ok=True)
            fd = os.open(self.folder / f"{key}.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w", encoding="utf-8") as file:
                file.write(entry.dumps())
        except OSError as exc:
            raise NotKept(f"{self.folder} cannot be written ({exc.strerror or exc})") from None
        return key

    async def get(self, key: str, owner: str | None) -> Entry | None:
        if not key.isalnum():
            return None
        try:
            text = (self.folder / f"{key}.json").read_text(encoding="utf-8")
        except OSError:
            return None
        return _readable(Entry.loads(text), owner, self.seconds)

    def part(self, name: str) -> Files:
        return Files(self.folder / _digest(name), self.seconds)


class Redis:
    """Kept in a Redis or Valkey server that replicas share: each answer one key (`mcp-cli:answers:NAMESPACE:ID`)
    that expires after `seconds`. Calls run in a worker thread, so a slow store never holds up other calls; a store
    that cannot be reached raises NotKept saying so, and is logged once until it answers again."""

    def __init__(self, url: str, namespace: str, seconds: float = SECONDS, client: Any = None) -> None:
        self.url, self.namespace, self.seconds = url, namespace, seconds
        self.prefix = f"mcp-cli:answers:{namespace}:"
        try:  # the `redis` extra, imported only here: it costs a server's start about 0.1 s
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise ValueError(f"--answers-store needs the redis package: {INSTALL}") from None

        self._failed = redis.RedisError
        if client is None:
            parts = urlsplit(url)
            scheme = {"valkey": "redis", "valkeys": "rediss"}.get(parts.scheme, parts.scheme)
            client = redis.Redis.from_url(
                urlunsplit(parts._replace(scheme=scheme)),
                socket_connect_timeout=CONNECT,
                socket_timeout=READ,
                retry=Retry(NoBackoff(), 1),
            )
        self.client = client
        self._down = False

    @property
    def where(self) -> str:
        return redacted(self.url)

    async def _run(self, method: str, *args: Any, **options: Any) -> Any:
        try:
            done = await anyio.to_thread.run_sync(partial(getattr(self.client, method), *args, **options))
        except self._failed as exc:
            if not self._down:
                log.warning("the answers store %s cannot be reached: %s", self.where, exc)
            self._down = True
            raise NotKept(f"the answers store {self.where} cannot be reached ({type(exc).__name__}: {exc})") from None
        self._down = False
        return done

    async def put(self, entry: Entry) -> str:
        _keepable(entry)
        key = new_key()
        await self._run("set", self.prefix + key, entry.dumps(), ex=max(int(self.seconds), 1))
        return key

    async def get(self, key: str, owner: str | None) -> Entry | None:
        if not key.isalnum():
            return None
        text = await self._run("get", self.prefix + key)
        return None if text is None else _readable(Entry.loads(text), owner, self.seconds)

    def part(self, name: str) -> Redis:
        return Redis(self.url, f"{self.namespace}:{_digest(name)}", self.seconds, self.client)


def redacted(url: str) -> str:
    """A store's URL without its user and password."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def store(url: str | None, namespace: str) -> Store:
    """The store a server keeps answers in: Redis or Valkey at `url` (`redis://HOST:PORT/DB`, `rediss://` for TLS,
    `valkey://`, `unix:///path`), namespaced by `namespace` (the tree's name); in memory without one. ValueError
    saying what to do for a URL of another kind, or without the redis package."""
    if not url:
        return Memory()
    scheme = urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise ValueError(
            f"--answers-store takes a Redis or Valkey URL (redis://HOST:PORT/DB, rediss://, valkey://, "
            f"unix:///PATH), not {redacted(url)!r}"
        )
    if importlib.util.find_spec("redis") is None:
        raise ValueError(f"--answers-store {scheme}://... needs the redis package: {INSTALL}")
    try:
        return Redis(url, namespace)
    except ValueError as exc:
        raise ValueError(f"--answers-store {redacted(url)!r}: {exc}") from None
