"""A cancel during an HTTP API's POST outside BEGIN, over the wire.

The POST has reached the API (the test's own FastAPI app, which holds it): a cancel is
too late. The client waits for the POST's answer and gets it, with a NOTICE that the
cancel came too late, and the journal says the same: ``fired`` when the answer comes,
``in doubt`` (08007) when it never does within the API's timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, tables_of
from .test_http_in_doubt import SlowNotes

LAST = "SELECT status FROM scratchpad.journal ORDER BY txid DESC, seq DESC LIMIT 1"
INSERT = "INSERT INTO t_list_notes (title) VALUES ('late')"


@asynccontextmanager
async def held_notes(sidecar: Any, timeout: float) -> AsyncIterator[tuple[SlowNotes, Any]]:
    api = SlowNotes()
    async with http_served(api.app()) as url:
        try:
            async with tables_of(Api(url, None), sidecar,  # type: ignore[arg-type]
                                 timeout=timeout) as tables:
                yield api, tables
        finally:
            api.release.set()


async def _cancel_once_posted(api: SlowNotes, conn: psycopg.AsyncConnection[Any],
                              running: asyncio.Future[Any]) -> None:
    """Cancel once the API holds the POST; give a cancel that stops the statement the
    second it would take to answer."""
    for _ in range(200):
        if api.keys:
            break
        await asyncio.sleep(0.05)
    assert api.keys, "the POST never reached the API"
    await conn.cancel_safe()
    await asyncio.wait([running], timeout=1.0)


async def test_a_cancel_after_the_post_left_answers_its_outcome(sidecar):
    async with held_notes(sidecar, timeout=10.0) as (api, t), await t.connect() as conn:
        running = asyncio.ensure_future(conn.execute(INSERT))
        await _cancel_once_posted(api, conn, running)
        api.release.set()
        cur = await running  # not 57014: the POST answered, and that is the outcome
        assert cur.statusmessage == "INSERT 0 1"
        assert any(m.startswith("the cancel request came too late") for _, m in conn.notices)
        assert await rows(conn, LAST) == [("fired",)]
        assert [n.title for n in api.notes.values()] == ["late"]


async def test_a_cancelled_post_with_no_answer_is_in_doubt(sidecar):
    async with held_notes(sidecar, timeout=1.5) as (api, t), await t.connect() as conn:
        running = asyncio.ensure_future(conn.execute(INSERT))
        await _cancel_once_posted(api, conn, running)
        with pytest.raises(psycopg.errors.TransactionResolutionUnknown):
            await running  # the shield waited for an answer that never came: in doubt
        assert await rows(conn, LAST) == [("in doubt",)]
