"""scratchpad.activity, pg_backend_pid() and pg_cancel_backend(pid), through the wire: a
statement stuck in a slow tool is seen from another session, with its call in flight,
and cancelled there, its client getting 57014; users see and cancel their own sessions,
an administrator everyone's."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import Bindings, define_resource

from .fix_reliability import serve


def _stuck() -> tuple[Any, asyncio.Event]:
    started = asyncio.Event()

    async def select(b: Bindings) -> list[dict[str, Any]]:
        started.set()
        await asyncio.sleep(3600)  # until cancelled
        return []

    return define_resource("stuck", columns=[("n", "bigint")], volatility="volatile",
                           select=select), started


async def _activity(conn: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
    cur = await conn.execute(
        "SELECT pid, usename, state, query, calls FROM scratchpad.activity ORDER BY pid")
    return await cur.fetchall()


async def test_a_stuck_statement_is_seen_and_cancelled_from_another_session(sidecar):
    stuck, started = _stuck()
    async with serve(sidecar, [stuck]) as served:
        ann = await served.connect("ann")
        ann_pid = ann.info.backend_pid
        assert (await (await ann.execute("SELECT pg_backend_pid()")).fetchone()) == (ann_pid,)
        running = asyncio.ensure_future(ann.execute("SELECT * FROM stuck"))
        await asyncio.wait_for(started.wait(), 10)

        ann2 = await served.connect("ann")
        rows = {r[0]: r for r in await _activity(ann2)}
        _, user, state, query, calls = rows[ann_pid]
        assert (user, state, query) == ("ann", "active", "SELECT * FROM stuck")
        assert [(c["resource"], c["verb"]) for c in calls] == [("stuck", "select")]
        assert calls[0]["seconds"] >= 0
        assert rows[ann2.info.backend_pid][2] == "active"  # the statement reading the view

        bob = await served.connect("bob")
        assert [r[1] for r in await _activity(bob)] == ["bob"]  # his own sessions only
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
            await bob.execute("SELECT pg_cancel_backend(%s)", (ann_pid,))
        assert "scratchpad.activity" in (refused.value.diag.message_hint or "")
        assert not running.done()

        root = await served.connect("root")
        assert {r[1] for r in await _activity(root)} == {"ann", "bob", "root"}
        cur = await root.execute("SELECT pg_cancel_backend(%s)", (ann_pid,))
        assert await cur.fetchone() == (True,)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await asyncio.wait_for(running, 10)
        assert (await (await ann.execute("SELECT 1")).fetchone()) == (1,)  # goes on
        after = {r[0]: r for r in await _activity(root)}
        assert after[ann_pid][2:4] == ("idle", "SELECT 1")


async def test_backend_functions_answer_alone_and_say_so_elsewhere(sidecar):
    stuck, _ = _stuck()
    async with serve(sidecar, [stuck]) as served:
        ann = await served.connect("ann")
        cur = await ann.execute("SELECT pg_cancel_backend(123456789) AS sent")
        assert [d.name for d in cur.description] == ["sent"]
        assert await cur.fetchone() == (False,)
        assert any(n[0] == "WARNING" and "123456789 is not a session" in n[1]
                   for n in ann.notices)  # type: ignore[attr-defined]
        with pytest.raises(psycopg.errors.FeatureNotSupported) as refused:
            await ann.execute("SELECT pg_backend_pid() + 1")
        assert "Call it alone" in (refused.value.diag.message_hint or "")
        # A driver that prepares: the types are Postgres' own (integer, boolean).
        cur = await ann.execute("SELECT pg_backend_pid()", prepare=True)
        assert await cur.fetchone() == (ann.info.backend_pid,)
        assert cur.description[0].type_code == 23
