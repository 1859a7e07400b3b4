"""Pulling a resolver's rows: a list, an iterator or generator, or an async one.

Rules:
- Rows are pulled lazily and no more than ``cap``: at a pushed LIMIT the server
  stops asking (it never calls ``next`` past it), and at the per-call row cap
  the answer is cut (the caller says so in a NOTICE).
- A plain iterator is pulled in a worker thread unless the resource is
  ``inline``: its ``next`` may wait on a remote API.
- An error raised while pulling is the tool's own, as a resolver's error is;
  a generator left unfinished is closed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from glove_scratchpad import errors

__all__ = ["pull"]


async def pull(out: Any, cap: int, inline: bool = False) -> list[Any]:
    """At most ``cap`` rows of a resolver's answer; ``next`` is called at most ``cap`` times."""
    if out is None:
        return []
    if isinstance(out, BaseModel | Mapping):
        return [out]
    if isinstance(out, list | tuple):
        return list(out[:cap]) if len(out) > cap else list(out)
    if hasattr(out, "__aiter__"):
        return await _pull_async(out, cap)
    if not hasattr(out, "__iter__"):
        raise errors.ExternalRoutineError(
            f"a select resolver returned {type(out).__name__}, not rows",
            hint="A select resolver returns a list, an iterator or generator, or an async "
            "one, of pydantic models or dicts.")
    it = iter(out)
    if inline:
        return _take(it, cap)
    return await asyncio.to_thread(_take, it, cap)


def _take(it: Iterator[Any], cap: int) -> list[Any]:
    rows: list[Any] = []
    try:
        while len(rows) < cap:
            try:
                rows.append(next(it))
            except StopIteration:
                break
        return rows
    finally:
        if inspect.isgenerator(it):
            it.close()


async def _pull_async(out: AsyncIterator[Any], cap: int) -> list[Any]:
    rows: list[Any] = []
    it = aiter(out)
    try:
        while len(rows) < cap:
            try:
                rows.append(await anext(it))
            except StopAsyncIteration:
                break
        return rows
    finally:
        close = getattr(it, "aclose", None)
        if close is not None:
            await close()
