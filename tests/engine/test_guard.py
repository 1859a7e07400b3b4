"""The call context, retries and rate limits, over the wire.

- A resolver with a ``ctx`` parameter gets a ``CallContext``: user, session,
  statement, deadline, and for a write its idempotency key.
- ``retries=N``: a read whose resolver raises ``TransientError`` or times out is
  made again, with backoff; a write never is. EXPLAIN shows it.
- ``rate=(calls, seconds)``: one token bucket for every session of the server;
  calls over it wait (within the statement's timeout), never fail. EXPLAIN shows it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, CallContext, TransientError, define_resource
from glove_scratchpad.server.engine.guard import Limits

from .fix_reliability import Notes, serve


class Row(BaseModel):
    k: int
    attempt: int = 0


class Flaky:
    """Fails ``failures`` times per key (a TransientError, or a hang past the timeout),
    then answers; records when each call began."""

    def __init__(self, failures: int, hang: bool = False) -> None:
        self.failures = failures
        self.hang = hang
        self.attempts: dict[int, int] = {}
        self.started: list[float] = []
        self.lock = threading.Lock()

    def __call__(self, b: Bindings) -> list[Row]:
        k = b.one("k")
        with self.lock:
            n = self.attempts[k] = self.attempts.get(k, 0) + 1
            self.started.append(time.monotonic())
        if n <= self.failures:
            if self.hang:
                time.sleep(1.0)  # past the resolver timeout
            else:
                raise TransientError("429 Too Many Requests", retry_after=0.05)
        return [Row(k=k, attempt=n)]


def flaky_resource(name: str, flaky: Flaky, **kw: Any) -> Any:
    return define_resource(name, schema=Row, keys=["k"], volatility="volatile",
                           select=flaky, **kw)


async def test_a_resolver_with_ctx_gets_the_call_context(sidecar):
    notes = Notes()
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect("ann")
        before = time.monotonic()
        await conn.execute("SELECT title FROM notes WHERE id = 1")
        (_, _, _, ctx), = [c for c in notes.calls if c[0] == "select"]
        assert isinstance(ctx, CallContext)
        assert (ctx.user, ctx.statement) == ("ann", "SELECT title FROM notes WHERE id = 1")
        assert isinstance(ctx.session, int) and ctx.idempotency_key is None
        assert ctx.deadline is not None and ctx.deadline > before
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO notes (title) VALUES ('a'), ('b')")
        await conn.execute("COMMIT")
        (_, _, _, wctx), = [c for c in notes.calls if c[0] == "insert"]
        # The statement that staged the write, not COMMIT; a key of its own.
        assert wctx.statement == "INSERT INTO notes (title) VALUES ('a'), ('b')"
        assert str(uuid.UUID(wctx.idempotency_key)) == wctx.idempotency_key
        assert wctx.session == ctx.session
        await conn.close()


async def test_a_read_is_retried_on_a_transient_error(sidecar):
    flaky = Flaky(failures=2)
    async with serve(sidecar, [flaky_resource("flaky", flaky, retries=3)]) as served:
        conn = await served.connect()
        cur = await conn.execute("SELECT k, attempt FROM flaky WHERE k = 7")
        assert await cur.fetchall() == [(7, 3)]
        cur = await conn.execute("SELECT status FROM scratchpad.calls WHERE resource = 'flaky' "
                                 "ORDER BY at")
        assert [r[0] for r in await cur.fetchall()] == ["error", "error", "ok"]
        cur = await conn.execute("EXPLAIN SELECT * FROM flaky WHERE k = 7")
        plan = "\n".join(r[0] for r in await cur.fetchall())
        assert "Retries: up to 3, on TransientError or a timeout" in plan
        await conn.close()


async def test_retries_give_up_after_the_last_one(sidecar):
    flaky = Flaky(failures=10)
    async with serve(sidecar, [flaky_resource("flaky", flaky, retries=2)]) as served:
        conn = await served.connect()
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT * FROM flaky WHERE k = 1")
        assert "(3 attempts)" in info.value.diag.message_primary
        assert "429 Too Many Requests" in info.value.diag.message_primary
        assert flaky.attempts == {1: 3}
        await conn.close()


async def test_a_timeout_counts_as_transient(sidecar):
    flaky = Flaky(failures=1, hang=True)
    limits = Limits(resolver_timeout=0.3)
    async with serve(sidecar, [flaky_resource("hangs", flaky, retries=1)],
                     limits=limits) as served:
        conn = await served.connect()
        cur = await conn.execute("SELECT attempt FROM hangs WHERE k = 1")
        assert await cur.fetchall() == [(2,)]
        await conn.close()


async def test_a_write_is_never_retried(sidecar):
    calls: list[Any] = []

    def insert(rows: list[Row]) -> None:
        calls.append(rows)
        raise TransientError("503 Service Unavailable")

    res = define_resource("once", schema=Row, volatility="volatile", insert=insert, retries=3)
    async with serve(sidecar, [res]) as served:
        conn = await served.connect()
        with pytest.raises(psycopg.errors.ExternalRoutineException):
            await conn.execute("INSERT INTO once (k) VALUES (1)")
        assert len(calls) == 1
        await conn.close()


async def test_a_rate_limit_is_shared_by_every_session_and_waits(sidecar):
    flaky = Flaky(failures=0)
    res = flaky_resource("limited", flaky, rate=(2, 0.5))
    async with serve(sidecar, [res]) as served:
        ann, bob = await served.connect("ann"), await served.connect("bob")
        sql = "SELECT count(*) FROM limited WHERE k IN ({})"
        a, b = await asyncio.gather(ann.execute(sql.format("1, 2, 3")),
                                    bob.execute(sql.format("4, 5, 6")))
        assert await a.fetchone() == (3,) and await b.fetchone() == (3,)  # none failed
        # A burst of 2, then one call every 0.25 s, for both sessions together.
        started = sorted(flaky.started)
        assert started[-1] - started[0] >= 0.9
        assert all(later - earlier >= 0.2 for earlier, later in itertools.pairwise(started[1:]))
        cur = await ann.execute("EXPLAIN SELECT * FROM limited WHERE k = 1")
        plan = "\n".join(r[0] for r in await cur.fetchall())
        assert "Rate limit: 2 calls per 0.5 s, shared by every session; calls over it wait" in plan
        # The wait counts against the statement's timeout.
        await ann.execute("SET statement_timeout = '200ms'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            await ann.execute(sql.format("7, 8, 9, 10"))
        await ann.close()
        await bob.close()
