"""Cursors over the wire: their calls made as rows are read and never twice, how long they
live (the transaction, WITH HOLD, the session), what the gate judges of a DECLARE, a
FETCH in another format than the cursor's, and an HTTP API's pages asked for as FETCH
reads them."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from ..fix_server import rows
from ..openapi.api_app import ITEMS as API_ITEMS
from ..openapi.fix_api import api_served, tables_of
from .fix_cursors import ITEMS, PAGE, item, served

ALL_PAGES = ITEMS // PAGE + 1


async def _connect(url: str) -> psycopg.AsyncConnection[Any]:
    return await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=None)


async def test_a_scroll_cursor_asks_each_page_once_however_it_moves(make_db: Any) -> None:
    async with served(make_db) as (url, pages), await _connect(url) as conn:
        await conn.execute("BEGIN")
        await conn.execute("DECLARE c SCROLL CURSOR FOR SELECT id FROM items")
        assert pages.requests == 0
        assert await rows(conn, "FETCH 10 FROM c") == [(i,) for i in range(10)]
        assert pages.requests == 3  # rows 0-9: pages of 4
        assert await rows(conn, "FETCH BACKWARD 5 FROM c") == [(i,) for i in (8, 7, 6, 5, 4)]
        assert await rows(conn, "FETCH ABSOLUTE 2 FROM c") == [(1,)]
        assert await rows(conn, "FETCH RELATIVE 11 FROM c") == [(12,)]
        assert pages.requests == 4
        assert await rows(conn, "FETCH LAST FROM c") == [(ITEMS - 1,)]
        assert pages.requests == ALL_PAGES
        assert await rows(conn, "FETCH FIRST FROM c") == [(0,)]
        await conn.execute("MOVE ABSOLUTE 5000 IN c")
        assert await rows(conn, "FETCH 2 FROM c") == [(5000,), (5001,)]
        assert pages.requests == ALL_PAGES
        await conn.execute("COMMIT")


async def test_a_cursor_without_hold_ends_with_its_transaction(make_db: Any) -> None:
    async with served(make_db) as (url, pages), await _connect(url) as conn:
        for end in ("COMMIT", "ROLLBACK"):
            await conn.execute("BEGIN")
            await conn.execute("DECLARE c CURSOR FOR SELECT id FROM items")
            await rows(conn, "FETCH 10 FROM c")
            await conn.execute(end)
            with pytest.raises(psycopg.errors.InvalidCursorName):
                await conn.execute("FETCH c")
        assert pages.requests == 6 and pages.closed == 2  # its read ended: no more pages


async def test_a_cursor_with_hold_is_read_to_its_end_at_commit(make_db: Any) -> None:
    async with served(make_db) as (url, pages), await _connect(url) as conn:
        await conn.execute("BEGIN")
        await conn.execute("DECLARE h CURSOR WITH HOLD FOR SELECT id, label FROM items")
        assert await rows(conn, "FETCH 2 FROM h") == [(0, "item 0"), (1, "item 1")]
        assert pages.requests == 1
        await conn.execute("COMMIT")
        assert pages.requests == ALL_PAGES  # its calls end inside the transaction
        assert await rows(conn, "FETCH 2 FROM h") == [(2, "item 2"), (3, "item 3")]
        assert await rows(conn, "SELECT name, is_holdable FROM pg_cursors") == [("h", True)]
        await conn.execute("BEGIN")
        await conn.execute("ROLLBACK")  # a held cursor outlives a later transaction
        assert await rows(conn, "FETCH 1 FROM h") == [(4, "item 4")]
        assert pages.requests == ALL_PAGES
        await conn.execute("CLOSE h")
        assert await rows(conn, "SELECT count(*) FROM pg_cursors") == [(0,)]


async def test_a_session_that_ends_closes_its_cursors(make_db: Any) -> None:
    async with served(make_db) as (url, pages):
        async with await _connect(url) as conn:
            await conn.execute("BEGIN")
            await conn.execute("DECLARE c CURSOR FOR SELECT id FROM items")
            await rows(conn, "FETCH 10 FROM c")
        async with asyncio.timeout(10):
            while not pages.closed:
                await asyncio.sleep(0.05)
        assert pages.requests == 3


async def test_declare_is_judged_as_its_select(make_db: Any) -> None:
    async with served(make_db) as (url, pages), await _connect(url) as conn:
        await conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="pg_read_file"):
            await conn.execute("DECLARE c CURSOR FOR SELECT pg_read_file('/etc/passwd')")
        await conn.execute("ROLLBACK")
        await conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="data-modifying"):
            await conn.execute("DECLARE c CURSOR FOR WITH d AS (DELETE FROM items "
                               "RETURNING id) SELECT * FROM d")
        await conn.execute("ROLLBACK")
        await conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.UndefinedColumn):
            await conn.execute("DECLARE c CURSOR FOR SELECT nope FROM items")
        await conn.execute("ROLLBACK")
        await conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.UndefinedParameter):
            await conn.execute("DECLARE c CURSOR FOR SELECT id FROM items WHERE id = $1")
        await conn.execute("ROLLBACK")
        assert pages.requests == 0


async def test_a_declare_takes_parameters_and_a_fetch_any_format(make_db: Any) -> None:
    async with served(make_db, 50) as (url, _):
        async with await psycopg.AsyncConnection.connect(url) as conn:
            async with conn.cursor(name="text_cur") as cur:
                await cur.execute("SELECT id, label, score FROM items WHERE id < %s", (20,))
                text = await cur.fetchall()
            async with conn.cursor(name="bin_cur", binary=True) as cur:
                await cur.execute("SELECT id, label, score FROM items WHERE id < %s", (20,))
                binary = await cur.fetchall()
            await conn.execute("DECLARE b BINARY CURSOR FOR SELECT id, label, score FROM items"
                               " WHERE id < 20")
            cur = conn.cursor()
            await cur.execute("FETCH ALL FROM b", binary=False)  # text, though it is BINARY
            as_text = await cur.fetchall()
        want = [(i, f"item {i}", item(i)["score"]) for i in range(20)]
        assert text == binary == as_text == want


async def test_an_http_api_is_asked_for_pages_as_fetch_reads(sidecar: Any) -> None:
    async with api_served() as api, tables_of(api, sidecar) as t:
        async with await t.connect() as conn:
            plain = await rows(conn, "SELECT n FROM t_page_items")
            api.rec.requests.clear()
            await conn.execute("BEGIN")
            await conn.execute("DECLARE c CURSOR FOR SELECT n FROM t_page_items")
            assert await rows(conn, "FETCH 10 FROM c") == plain[:10]
            # The first page of 100, and at most the next one: an HTTP table asks for the
            # page after the one it reads while its rows are pulled (a read ahead).
            assert len(api.rec.requests) <= 2
            rest = await rows(conn, "FETCH ALL FROM c")
            await conn.execute("COMMIT")
        assert plain[:10] + rest == plain and len(plain) == API_ITEMS
        assert len(api.rec.requests) == API_ITEMS // 100 + 1


async def test_pg_cursors_is_answered_not_refused_as_a_view_of_other_sessions(
        make_db: Any) -> None:
    """The server answers pg_cursors with the session's own cursors: the gate's refusals
    name it nowhere, so a schema that does not hold it is refused as any other catalog
    relation is, not as a view of other sessions."""
    async with served(make_db, 3) as (url, _), await _connect(url) as conn:
        assert await rows(conn, "SELECT count(*) FROM pg_catalog.pg_cursors") == [(0,)]
        for name in ("pg_toast.pg_cursors", "pg_temp.pg_cursors"):
            with pytest.raises(psycopg.Error) as caught:
                await conn.execute(f"SELECT * FROM {name}")
            assert caught.value.sqlstate == "42501"
            assert "other sessions" not in str(caught.value.diag.message_primary)
