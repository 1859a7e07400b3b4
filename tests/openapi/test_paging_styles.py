"""Paging over the wire, by every style: ``count(*)`` over 250 items in pages of 20 reads
them all in 13 requests, ``LIMIT 5`` is one request asking for 5; page parameters no
name rule knows are declared and are never columns; a read that leaves pages says so
in a NOTICE. The API is the tests' own (``styles_app``), counted as it is asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, Tables, tables_of
from .styles_app import ITEMS, PAGE, Requests, make_app

PAGES = -(-ITEMS // PAGE)  # 13: twelve pages of 20, and the last of 10
ODD = {"name": "odd", "select": "GET /odd/items",
       "paging": {"style": "header", "header": "X-Continue", "param": "tok", "size": "n"}}


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[tuple[Tables, Requests]]:
    app, log = make_app()
    async with http_served(app) as url, tables_of(
            Api(url, None), sidecar, tables=[ODD]) as tables:  # type: ignore[arg-type]
        yield tables, log


@pytest.fixture
async def t(served: tuple[Tables, Requests]) -> AsyncIterator[tuple[Tables, Requests]]:
    served[1].seen.clear()
    yield served


async def names(conn: Any, table: str) -> list[str]:
    return [n for (n,) in await rows(conn, "SELECT column_name FROM information_schema.columns "
                                     "WHERE table_name = %s ORDER BY ordinal_position", table)]


@pytest.mark.parametrize(("table", "path", "size"), [
    ("t_link_items", "/link/items", "limit"),
    ("t_header_items", "/header/items", "_limit"),
    ("t_cursor_items", "/cursor/items", "limit"),
    ("t_page_items", "/page/items", "per_page"),
    ("t_offset_items", "/offset/items", "limit"),
    ("t_odd", "/odd/items", "n")])
async def test_count_reads_every_page_in_13_requests_and_a_limit_asks_for_5(
        t, table, path, size):
    tables, log = t
    async with await tables.connect() as conn:
        assert await rows(conn, f"SELECT count(*), sum(n) FROM {table}") == [
            (ITEMS, ITEMS * (ITEMS + 1) // 2)]
        assert len(log.of(path)) == PAGES == 13
        assert conn.notices == []
        log.seen.clear()
        assert await rows(conn, f"SELECT n FROM {table} LIMIT 5") == [(n,) for n in range(1, 6)]
        [query] = log.of(path)
        assert query[size] == "5"


async def test_a_named_header_is_recognised_where_the_document_declares_it(t):
    tables, _ = t
    async with await tables.connect() as conn:
        plan = "\n".join(r[0] for r in await rows(conn, "EXPLAIN SELECT * FROM t_header_items"))
        assert "/header/items?_limit=20 (paged by the next-page header, _limit per page)" in plan
        # The page parameters are the server's, never columns, whatever their names.
        assert await names(conn, "t_header_items") == ["n", "label"]
        assert await names(conn, "t_odd") == ["n", "label"]


async def test_a_next_page_the_answer_names_is_followed_where_the_document_is_silent(t):
    tables, log = t
    async with await tables.connect() as conn:
        assert await rows(conn, "SELECT count(*), max(n) FROM t_hidden_items") == [
            (ITEMS, ITEMS)]
        assert len(log.of("/hidden/items")) == PAGES
        assert conn.notices == []


async def test_pages_left_unread_are_a_notice(t):
    tables, log = t
    async with await tables.connect() as conn:
        assert await rows(conn, "SELECT count(*) FROM t_quiet_items") == [(PAGE,)]
        [(severity, message)] = conn.notices
        assert severity == "NOTICE"
        assert message == (f"t_quiet_items: the API's answer shows more rows than the {PAGE} "
                           f"read (a total of {ITEMS} rows), and the table's paging (one "
                           "request, and the next pages its answers name) does not follow it")
        # A LIMIT the first page holds leaves nothing unsaid.
        conn.notices.clear()
        assert await rows(conn, "SELECT n FROM t_quiet_items LIMIT 3") == [(1,), (2,), (3,)]
        assert conn.notices == []
    assert len(log.of("/quiet/items")) == 2


async def test_a_one_row_table_follows_no_url_it_holds(t):
    tables, log = t
    async with await tables.connect() as conn:
        assert await rows(conn, "SELECT name, next FROM t_about") == [("styles", "/link/items")]
        assert conn.notices == []
    assert [p for _, p, _ in log.seen] == ["/about"]
