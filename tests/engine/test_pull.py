"""A lazy resolver's rows are read like the call itself: a plain generator off the event
loop, within the resolver timeout; one that fails midway fails with its own message, and
its call is audited (``scratchpad.calls``) and counted (``glove_tool_calls_total``) as
failed; one that fails so with a transient error is read again from the start, as a
call that failed so is made again."""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import Bindings, TransientError, define_resource
from glove_scratchpad.server.engine.guard import Limits

from ..fix_metrics import counted
from .fix_reliability import serve


def _slow_pages(b: Bindings) -> Iterator[dict[str, Any]]:
    for n in range(3):
        time.sleep(0.6 if n == 2 else 0)  # the third page waits on a slow API
        yield {"q": b.one("q"), "n": n}


def _broken_pages(b: Bindings) -> Iterator[dict[str, Any]]:
    yield {"q": b.one("q"), "n": 0}
    raise ConnectionError("the API dropped the connection after page 1")


_flaky_calls = itertools.count()


def _flaky_pages(b: Bindings) -> Iterator[dict[str, Any]]:
    first = next(_flaky_calls) == 0
    for n in range(3):
        if first and n == 1:
            raise TransientError("the API dropped the connection after page 1")
        yield {"q": b.one("q"), "n": n}


RESOURCES = [
    define_resource("slow_pages", columns=[("q", "text"), ("n", "bigint")], keys=["q"],
                    volatility="volatile", select=_slow_pages),
    define_resource("broken_pages", columns=[("q", "text"), ("n", "bigint")], keys=["q"],
                    volatility="volatile", select=_broken_pages),
    define_resource("flaky_pages", columns=[("q", "text"), ("n", "bigint")], keys=["q"],
                    volatility="volatile", select=_flaky_pages, retries=1),
]


async def test_a_generator_is_read_off_the_loop_and_within_the_timeout(sidecar):
    async with serve(sidecar, RESOURCES, limits=Limits(resolver_timeout=0.3)) as served:
        slow, other = await served.connect(), await served.connect()
        reading = asyncio.ensure_future(slow.execute("SELECT n FROM slow_pages WHERE q = 'x'"))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        await other.execute("SELECT 1")
        assert time.monotonic() - started < 0.3  # the sleeping generator blocks no one
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await reading
        assert "timed out" in info.value.diag.message_primary
        await slow.close()
        await other.close()


async def test_a_generator_failing_midway_fails_with_its_own_message(sidecar):
    async with serve(sidecar, RESOURCES) as served:
        conn = await served.connect()
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT n FROM broken_pages WHERE q = 'x'")
        assert "the API dropped the connection after page 1" in info.value.diag.message_primary
        cur = await conn.execute("SELECT 1")  # the session goes on
        assert await cur.fetchall() == [(1,)]
        await conn.close()


@pytest.mark.parametrize(("resource", "status", "error"), [
    ("broken_pages", "error", "ConnectionError: the API dropped the connection after page 1"),
    ("slow_pages", "timeout", "timed out after 0.3 s")])
async def test_a_generator_failing_midway_is_audited_and_counted_as_failed(
        sidecar, monkeypatch, resource, status, error):
    sample = counted(monkeypatch)
    calls = functools.partial(sample, "glove_tool_calls_total", resource=resource,
                              verb="select")
    before = {s: calls(outcome=s) for s in ("ok", status)}
    async with serve(sidecar, RESOURCES, limits=Limits(resolver_timeout=0.3)) as served:
        conn = await served.connect()
        with pytest.raises(psycopg.errors.ExternalRoutineException):
            await conn.execute(f"SELECT n FROM {resource} WHERE q = 'x'")
        # A LIMIT the generator is not pulled past: the read is whole, its rows counted.
        cur = await conn.execute(f"SELECT n FROM {resource} WHERE q = 'y' LIMIT 1")
        assert await cur.fetchall() == [(0,)]
        cur = await conn.execute(
            "SELECT arguments->>'q', status, error, rows FROM scratchpad.calls "
            "WHERE resource = %s AND verb = 'select' ORDER BY at", (resource,))
        assert await cur.fetchall() == [("x", status, error, None), ("y", "ok", None, 1)]
    assert calls(outcome=status) - before[status] == 1
    assert calls(outcome="ok") - before["ok"] == 1


async def test_a_generator_failing_midway_with_a_transient_error_is_read_again(sidecar):
    async with serve(sidecar, RESOURCES) as served:
        conn = await served.connect()
        cur = await conn.execute("SELECT n FROM flaky_pages WHERE q = 'x' ORDER BY n")
        assert await cur.fetchall() == [(0,), (1,), (2,)]  # the second read, whole
        cur = await conn.execute("SELECT status, error, rows FROM scratchpad.calls "
                                 "WHERE resource = 'flaky_pages' ORDER BY at")
        assert await cur.fetchall() == [
            ("error", "TransientError: the API dropped the connection after page 1", None),
            ("ok", None, 3)]
