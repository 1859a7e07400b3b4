"""The SQL text sent to the sidecar around a statement (server/sql/sidecar_text.py): the
session's settings set for each statement's transaction, and what a statement's own
set_config calls set read back, seen through the wire."""

from __future__ import annotations

import datetime as dt

import psycopg


async def test_a_session_setting_reaches_the_sidecar_with_each_statement(dsn):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SET DateStyle = 'ISO, DMY'")
        await conn.execute("SET TimeZone = 'Asia/Tokyo'")
        # Parsed under them (a literal is typed at parse time), and run under them.
        cur = await conn.execute("SELECT '13/01/2024'::date, current_setting('TimeZone')")
        assert await cur.fetchall() == [(dt.date(2024, 1, 13), "Asia/Tokyo")]


async def test_what_a_statements_set_config_sets_is_read_back_and_kept(dsn):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT set_config('TimeZone', 'America/Lima', false),"
                                 " set_config('search_path', 'scratchpad, public', false)")
        assert await cur.fetchall() == [("America/Lima", "scratchpad, public")]
        assert conn.info.parameter_status("TimeZone") == "America/Lima"
        cur = await conn.execute("SELECT current_setting('TimeZone'),"
                                 " current_setting('search_path')")
        assert await cur.fetchall() == [("America/Lima", "scratchpad, public")]
