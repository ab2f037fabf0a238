"""Python handlers of the demo tree. Each is a plain function; parsed options arrive as keyword arguments."""

from __future__ import annotations

import statistics
from pathlib import Path


def upper(words: list[str], exclaim: bool = False) -> str:
    return " ".join(words).upper() + ("!" if exclaim else "")


def stats(file: str | None = None, text: str | None = None) -> dict:
    body = Path(file).read_text(encoding="utf-8") if file else text or ""
    return {"lines": len(body.splitlines()), "words": len(body.split()), "characters": len(body)}


def repeat(text: str, times: int = 2, sep: str = " ") -> str:
    return sep.join([text] * times)


def add(a: int, b: int) -> int:
    return a + b


def mean(numbers: list[float]) -> dict:
    return {"mean": statistics.fmean(numbers), "median": statistics.median(numbers), "count": len(numbers)}
