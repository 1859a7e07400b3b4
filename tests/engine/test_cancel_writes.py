"""A cancel or a statement timeout during a write outside BEGIN, over the wire.

Once the write's request has left, it is too late: the write runs to its end, like
COMMIT, and the client gets its true outcome with a NOTICE saying the cancel (or the
timeout) came too late. Before it leaves (here: held by the resource's rate), the cancel
stops it: nothing is called, the client gets 57014, and the journal says ``not run``.
Either way the journal and the client's answer agree.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from .fix_reliability import Notes, serve

LAST = "SELECT status, error FROM scratchpad.journal ORDER BY txid DESC, seq DESC LIMIT 1"


async def _stop(conn: psycopg.AsyncConnection[Any], how: str) -> None:
    """A CancelRequest now, or (``timeout``) nothing: the statement's timeout does it."""
    if how == "cancel":
        await conn.cancel_safe()


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_a_cancel_after_the_request_left_is_too_late(sidecar, how):
    notes = Notes(gate=threading.Event())
    async with serve(sidecar, [notes.resource()]) as served:
        conn = await served.connect()
        if how == "timeout":
            await conn.execute("SET statement_timeout = '200ms'")
        running = asyncio.ensure_future(
            conn.execute("INSERT INTO notes (title) VALUES ('late') RETURNING id"))
        try:
            assert await asyncio.to_thread(notes.entered.wait, 10)  # the tool has it
            await _stop(conn, how)
            # A cancel that stopped the statement would answer within this second.
            await asyncio.wait([running], timeout=1.0)
        finally:
            assert notes.gate is not None
            notes.gate.set()
        cur = await running  # the write's own outcome, not 57014
        assert await cur.fetchall() == [(3,)]
        said = [m for _, m, _, _ in conn.notices if "came too late" in m]
        assert said == [f"the {'cancel request' if how == 'cancel' else 'statement timeout'}"
                        " came too late: the write had been sent, so it ran to its end and "
                        "this is its outcome"]
        await conn.execute("RESET statement_timeout")
        assert await (await conn.execute(LAST)).fetchall() == [("fired", None)]
        assert notes.writes() == [("insert", ["late"])]


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_a_cancel_before_the_request_left_stops_it(sidecar, how):
    notes = Notes()
    # One call an hour: the second write waits for the rate, unsent, until canceled.
    resource = replace(notes.resource(), rate=(1, 3600.0))
    async with serve(sidecar, [resource]) as served:
        conn = await served.connect()
        await conn.execute("INSERT INTO notes (title) VALUES ('first')")
        if how == "timeout":
            await conn.execute("SET statement_timeout = '300ms'")
        running = asyncio.ensure_future(
            conn.execute("INSERT INTO notes (title) VALUES ('held')"))
        if how == "cancel":
            await asyncio.sleep(0.3)  # the write is journaled and waits for the rate
            await _stop(conn, how)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await asyncio.wait_for(running, 10)
        await conn.execute("RESET statement_timeout")
        assert await (await conn.execute(LAST)).fetchall() == [
            ("not run", "canceled before it was sent")]
        assert notes.writes() == [("insert", ["first"])]  # never called
