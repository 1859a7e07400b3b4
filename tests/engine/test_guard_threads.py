"""Plain resolvers run off the event loop: in worker threads, under the resolver timeout,
the resource's concurrency slot and cancellation, as async ones do; ``inline=True``
keeps a pure one on the loop. Over the wire (psycopg against a server on port 0)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server.engine.guard import Limits

from .fix_reliability import serve


class Row(BaseModel):
    k: int
    thread: str = ""


class Sleepy:
    """A plain resolver that sleeps (or waits for ``release``), recording what it saw."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.entered = threading.Event()
        self.finished = threading.Event()
        self.release = threading.Event()
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, b: Bindings) -> list[Row]:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        self.entered.set()
        try:
            self.release.wait(self.seconds)
        finally:
            with self.lock:
                self.running -= 1
            self.finished.set()
        return [Row(k=b.one("k"), thread=threading.current_thread().name)]


def resources(sleepy: Sleepy) -> list[Any]:
    def here(b: Bindings) -> list[Row]:
        return [Row(k=b.one("k"), thread=threading.current_thread().name)]

    return [
        define_resource("sleepy", schema=Row, keys=["k"], volatility="volatile", select=sleepy),
        define_resource("pure", schema=Row, keys=["k"], volatility="volatile", select=here,
                        inline=True),
        define_resource("plain", schema=Row, keys=["k"], volatility="volatile", select=here),
    ]


async def test_a_plain_resolver_sleeping_does_not_delay_another_clients_select_1(sidecar):
    sleepy = Sleepy(3.0)
    async with serve(sidecar, resources(sleepy)) as served:
        slow, quick = await served.connect("ann"), await served.connect("bob")
        reading = asyncio.ensure_future(slow.execute("SELECT k FROM sleepy WHERE k = 1"))
        assert await asyncio.to_thread(sleepy.entered.wait, 10)
        cur = await quick.execute("SELECT 1")
        assert await cur.fetchone() == (1,)
        # SELECT 1 finished while the plain resolver still sleeps.
        assert not sleepy.finished.is_set() and not reading.done()
        sleepy.release.set()
        assert await (await reading).fetchall() == [(1,)]
        await slow.close()
        await quick.close()


async def test_inline_keeps_a_pure_resolver_on_the_loop(sidecar):
    async with serve(sidecar, resources(Sleepy(0))) as served:
        conn = await served.connect()
        cur = await conn.execute("SELECT p.thread, q.thread FROM pure p, plain q "
                                 "WHERE p.k = 1 AND q.k = 1")
        on_loop, off_loop = await cur.fetchone()
        assert on_loop == threading.current_thread().name  # the server's loop is this one
        assert off_loop.startswith("glove-resolver")
        await conn.close()


async def test_a_plain_resolver_is_held_to_the_resolver_timeout(sidecar):
    sleepy = Sleepy(5.0)
    limits = Limits(resolver_timeout=0.3)
    async with serve(sidecar, resources(sleepy), limits=limits) as served:
        conn = await served.connect()
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT k FROM sleepy WHERE k = 1")
        assert "timed out after 0.3 s" in info.value.diag.message_primary
        assert not sleepy.finished.is_set()  # the error came before the tool's answer
        cur = await conn.execute("SELECT 1")  # the session goes on
        assert await cur.fetchone() == (1,)
        sleepy.release.set()
        await conn.close()


async def test_plain_resolvers_share_the_resources_concurrency_slots(sidecar):
    sleepy = Sleepy(0.3)
    async with serve(sidecar, resources(sleepy), limits=Limits(resource_concurrency=2)) as served:
        conn = await served.connect()
        cur = await conn.execute("SELECT count(*) FROM sleepy WHERE k IN (1, 2, 3, 4, 5)")
        assert await cur.fetchone() == (5,)
        assert sleepy.peak == 2  # in parallel, two at a time
        await conn.close()


async def test_a_cancel_stops_the_wait_for_a_plain_resolver(sidecar):
    sleepy = Sleepy(10.0)
    async with serve(sidecar, resources(sleepy)) as served:
        conn = await served.connect()
        reading = asyncio.ensure_future(conn.execute("SELECT k FROM sleepy WHERE k = 1"))
        assert await asyncio.to_thread(sleepy.entered.wait, 10)
        started = time.monotonic()
        await conn.cancel_safe()
        with pytest.raises(psycopg.errors.QueryCanceled):
            await reading
        assert not sleepy.finished.is_set()  # canceled while the tool still ran
        assert time.monotonic() - started < 5
        sleepy.release.set()
        cur = await conn.execute("SELECT 1")
        assert await cur.fetchone() == (1,)
        await conn.close()
