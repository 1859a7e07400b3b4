"""The gate's rules for a session's temporary tables (``sql/temp_tables.py``), through the
wire: a temporary table may not take a resource's name, and other DDL stays refused with
the temporary table named as the way."""

from __future__ import annotations

from .fix_answers import answer, refusal


async def test_a_temporary_table_may_not_hide_a_resource(server):
    error = await refusal(server, "CREATE TEMP TABLE items (x int)")
    assert error.sqlstate == "42P07"
    assert error.message_primary == 'relation "items" already exists: it is a resource'
    assert "may not take a resource's name" in (error.message_hint or "")


async def test_a_permanent_table_is_refused_and_a_temporary_one_named(server):
    error = await refusal(server, "CREATE TABLE t (x int)")
    assert error.sqlstate == "42501"
    assert error.message_primary == "a permanent or unlogged table is not allowed here"
    assert "CREATE TEMP TABLE name" in (error.message_hint or "")
    assert await answer(server, "CREATE TEMP TABLE t AS SELECT 1 AS x") == [("SELECT 1",)]
