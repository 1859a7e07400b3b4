"""Pulling a resolver's rows: a list, an iterator or generator, or an async one.

Rules:
- Rows are pulled lazily and no more than ``cap``: at a pushed LIMIT the server
  stops asking (it never calls ``next`` past it), and at the per-call row cap
  the answer is cut (the caller says so in a NOTICE).
- A plain iterator is pulled as a plain resolver runs (a worker thread unless the
  resource is ``inline``: its ``next`` may wait on a remote API), within the
  resolver timeout, as an async one is.
- An error raised while pulling is the tool's own, as a resolver's error is;
  a generator left unfinished is closed.
- ``Opened`` reads an answer a part at a time across statements (a cursor's
  FETCHes, a portal's Executes): the iterator stays open between parts, until it
  ends or is ended (``end``: a plain generator closed at once, or by the pull still
  running it in a worker thread; an async one in a task of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from glove_scratchpad import errors
from glove_scratchpad.background import hold

__all__ = ["Opened", "pull"]


Reader = Callable[[Any], Awaitable[Any]]  # runs a pull: a plain function or an awaitable
_CLOSING: set[asyncio.Task[Any]] = set()  # async generators being closed


async def _here(work: Any) -> Any:
    return work() if callable(work) else await work


async def pull(out: Any, cap: int, read: Reader = _here) -> list[Any]:
    """At most ``cap`` rows of a resolver's answer; ``next`` is called at most ``cap`` times.
    ``read`` runs the pulling: the guard's, so that it is bounded like the call itself."""
    if isinstance(out, list | tuple):  # the most frequent: tested first
        return list(out[:cap]) if len(out) > cap else list(out)
    if out is None:
        return []
    if isinstance(out, BaseModel | Mapping):
        return [out]
    if hasattr(out, "__aiter__"):
        return await read(_pull_async(out, cap))
    if not hasattr(out, "__iter__"):
        raise errors.ExternalRoutineError(
            f"a select resolver returned {type(out).__name__}, not rows",
            hint="A select resolver returns a list, an iterator or generator, or an async "
            "one, of pydantic models or dicts.")
    it = iter(out)
    return await read(functools.partial(_take, it, cap))


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


class Opened:
    """A resolver's answer read a part at a time (a cursor's FETCHes): ``take(n)`` pulls at
    most ``n`` more rows, ``next`` called at most ``n`` times; ``done`` once it ended."""

    def __init__(self, out: Any, read: Reader = _here) -> None:
        self.read = read
        self.done = False
        self._abandoned = False  # ended: a pull still running in its thread closes it
        self._list: list[Any] | None = None
        self._it: Any = None
        if isinstance(out, list | tuple):
            self._list = list(out)
        elif out is None:
            self._list = []
        elif isinstance(out, BaseModel | Mapping):
            self._list = [out]
        elif hasattr(out, "__aiter__"):
            self._it = aiter(out)
        elif hasattr(out, "__iter__"):
            self._it = iter(out)
        else:
            raise errors.ExternalRoutineError(
                f"a select resolver returned {type(out).__name__}, not rows",
                hint="A select resolver returns a list, an iterator or generator, or an async "
                "one, of pydantic models or dicts.")

    async def take(self, n: int) -> list[Any]:
        if self.done:
            return []
        if self._list is not None:
            rows, self._list = self._list[:n], self._list[n:]
            self.done = not self._list
            return rows
        if hasattr(self._it, "__anext__"):
            rows = await self.read(self._take_async(n))
        else:
            rows = await self.read(functools.partial(self._take_plain, n))
        if len(rows) < n:
            await self.close()
        return rows

    def _take_plain(self, n: int) -> list[Any]:
        it = self._it
        rows: list[Any] = []
        try:
            for _ in range(n):
                try:
                    rows.append(next(it))
                except StopIteration:
                    self.done = True
                    break
        finally:
            # Ended while this pull ran (a timeout, a cancel): the generator ends here.
            if self._abandoned and inspect.isgenerator(it):
                with contextlib.suppress(ValueError):
                    it.close()
        return rows

    async def _take_async(self, n: int) -> list[Any]:
        rows: list[Any] = []
        for _ in range(n):
            try:
                rows.append(await anext(self._it))
            except StopAsyncIteration:
                self.done = True
                break
        return rows

    async def close(self) -> None:
        """Nothing more will be read: a generator left unfinished is closed."""
        it = self._it
        self.end(closing=False)
        if it is not None and not inspect.isgenerator(it) and hasattr(it, "aclose"):
            with contextlib.suppress(RuntimeError):  # still running: it ends alone
                await it.aclose()

    def end(self, *, closing: bool = True) -> None:
        """Nothing more will be read, from code that cannot wait: a plain generator is
        closed now (or by the pull running it), an async one in a task (``closing``)."""
        self.done, self._abandoned = True, True
        it, self._it = self._it, None
        if inspect.isgenerator(it):
            with contextlib.suppress(ValueError):  # running in a thread: that pull closes it
                it.close()
        elif closing and it is not None and hasattr(it, "aclose"):
            hold(_quietly(it.aclose()), _CLOSING)


async def _quietly(work: Any) -> None:
    with contextlib.suppress(Exception):  # a generator's error at its close: not wanted
        await work
