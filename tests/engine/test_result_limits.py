"""What a statement's result shows its client (``server/engine/result_limits.py``),
through psycopg: rows cut at the row limit with a NOTICE, which the client's
``client_min_messages`` can hold back as Postgres's does, and a result over
``max_result_bytes`` refused (54000) with how to ask for less.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import dsn, serving

ROW_LIMIT = 3
MAX_BYTES = 2_000  # far fewer than the 1,000 rows of ``many``


class Row(BaseModel):
    n: int
    label: str


def _rows(b: Bindings) -> list[dict[str, Any]]:
    return [{"n": i, "label": f"row {i}"} for i in range(1, 1001)]


@pytest.fixture
async def served(sidecar: Any) -> AsyncIterator[tuple[str, str]]:
    """Two servers over ``many``: one with a row limit, one with a small byte limit."""
    many = define_resource("many", schema=Row, volatility="volatile", select=_rows,
                           description="A thousand rows")
    cut = await Database.create([many], sidecar=sidecar, database="test_result_limits",
                                limits=Limits(row_limit=ROW_LIMIT))
    small = await Database.create([many], sidecar=sidecar, database="test_result_bytes",
                                  limits=Limits(max_result_bytes=MAX_BYTES))
    try:
        async with serving(cut) as one, serving(small) as other:
            yield dsn(one), dsn(other)
    finally:
        await cut.close()
        await small.close()


async def test_rows_past_the_row_limit_are_cut_with_a_notice_client_min_messages_can_hold(
        served: tuple[str, str]) -> None:
    notices: list[tuple[str | None, ...]] = []  # read in the handler: it lives no longer
    async with await psycopg.AsyncConnection.connect(served[0], autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(
            (d.severity, d.message_primary, d.message_hint)))
        cur = await conn.execute("SELECT n FROM many ORDER BY n")
        assert await cur.fetchall() == [(1,), (2,), (3,)]
        assert cur.statusmessage == f"SELECT {ROW_LIMIT}"
        assert notices == [(
            "NOTICE", f"result truncated to {ROW_LIMIT} rows (the row limit)",
            "Add WHERE or LIMIT to read the rows you need, or ORDER BY to choose which "
            "come first.")]

        notices.clear()
        await conn.execute("SET client_min_messages = warning")
        cur = await conn.execute("SELECT n FROM many ORDER BY n")
        assert await cur.fetchall() == [(1,), (2,), (3,)]
        assert notices == []  # a NOTICE is below WARNING: held back


async def test_a_result_past_max_result_bytes_is_refused_with_how_to_ask_for_less(
        served: tuple[str, str]) -> None:
    async with await psycopg.AsyncConnection.connect(served[1], autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as caught:
            await conn.execute("SELECT n, label FROM many")
        assert caught.value.sqlstate == "54000"
        assert caught.value.diag.message_hint == "Select fewer columns or rows."
        cur = await conn.execute("SELECT n FROM many WHERE n <= 5")
        assert len(await cur.fetchall()) == 5
