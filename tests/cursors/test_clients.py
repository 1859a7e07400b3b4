"""Clients that read through server-side cursors, over the wire, each reading a 10,000-row
paged resource (``fix_cursors``): psycopg's named cursors, SQLAlchemy's ``stream_results``
with ``yield_per``, pandas' ``read_sql(…, chunksize=…)`` and psql's ``FETCH_COUNT``.

After the first 10 rows, the upstream has been asked for the pages of those rows alone
(3 pages of 4); the whole read gives what a plain SELECT gives, each page asked once.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from typing import Any

import pandas as pd
import psycopg
import pytest
import sqlalchemy as sa

from .fix_cursors import ITEMS, PAGE, served

QUERY = "SELECT id, label, score FROM items WHERE score >= 0"
ALL_PAGES = ITEMS // PAGE + 1  # the last one is empty: it says the list ended
FIRST_TEN = 3  # the pages of the first 10 rows


def _plain(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(QUERY).fetchall()


async def test_psycopg_named_cursor_asks_for_pages_as_rows_are_read(make_db: Any) -> None:
    async with served(make_db) as (url, pages):
        def read() -> tuple[list[Any], int, list[Any]]:
            with psycopg.connect(url) as conn, conn.cursor(name="items_cur") as cur:
                cur.itersize = 500
                cur.execute(QUERY)
                assert pages.requests == 0  # DECLARE calls nothing
                first = cur.fetchmany(10)
                after_ten = pages.requests
                return first, after_ten, first + list(cur)

        first, after_ten, rows = await asyncio.to_thread(read)
        assert after_ten == FIRST_TEN
        assert pages.requests == ALL_PAGES  # every page once, however it was fetched
        plain = await asyncio.to_thread(_plain, url)
        assert rows == plain and first == plain[:10] and len(rows) == ITEMS


async def test_sqlalchemy_stream_results_with_yield_per(make_db: Any) -> None:
    async with served(make_db) as (url, pages):
        engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))

        def read() -> tuple[int, list[Any]]:
            with engine.connect() as conn:
                result = conn.execution_options(stream_results=True, yield_per=10).execute(
                    sa.text(QUERY))
                first = result.fetchmany(10)
                after_ten = pages.requests
                rows = [tuple(r) for r in first]
                for part in result.partitions():
                    rows.extend(tuple(r) for r in part)
                return after_ten, rows

        try:
            after_ten, rows = await asyncio.to_thread(read)
        finally:
            engine.dispose()
        assert after_ten == FIRST_TEN
        assert pages.requests == ALL_PAGES
        assert rows == await asyncio.to_thread(_plain, url)


async def test_pandas_read_sql_in_chunks(make_db: Any) -> None:
    async with served(make_db) as (url, pages):
        engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))

        def read() -> tuple[int, pd.DataFrame]:
            with engine.connect() as conn:
                chunks = pd.read_sql(QUERY, conn.execution_options(stream_results=True,
                                                                   max_row_buffer=10),
                                     chunksize=10)
                first = next(chunks)
                after_ten = pages.requests
                return after_ten, pd.concat([first, *chunks], ignore_index=True)

        try:
            after_ten, frame = await asyncio.to_thread(read)
        finally:
            engine.dispose()
        assert after_ten == FIRST_TEN
        assert pages.requests == ALL_PAGES
        plain = await asyncio.to_thread(_plain, url)
        assert list(frame.itertuples(index=False, name=None)) == plain


def _system_psql() -> str:
    # Debian's psql 15 reads FETCH_COUNT through a cursor; from 17 on, psql uses the
    # protocol's chunked rows instead, which need no cursor.
    path = shutil.which("psql")
    if path is None:
        pytest.fail("psql is missing (Debian's postgresql-client)")
    return path


async def _psql(url: str, *commands: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({"LC_ALL": "C.UTF-8", "PSQLRC": os.devnull, "PAGER": ""})
    args = [a for c in commands for a in ("-c", c)]
    proc = await asyncio.create_subprocess_exec(
        _system_psql(), "--no-psqlrc", "-X", "-A", "-t", "--dbname", url,
        "-v", "ON_ERROR_STOP=1", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env)
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_psql_fetch_count_reads_through_a_cursor(make_db: Any) -> None:
    async with served(make_db) as (url, pages):
        code, plain, err = await _psql(url, QUERY)
        assert (code, err) == (0, "")
        assert pages.requests == ALL_PAGES
        pages.requests = 0
        code, fetched, err = await _psql(url, r"\set FETCH_COUNT 10", QUERY)
        assert (code, err) == (0, "")
        assert fetched == plain and len(fetched.splitlines()) == ITEMS
        assert pages.requests == ALL_PAGES
        # Row 10 fails in the second FETCH: psql stopped there, the pages of 20 rows read.
        pages.requests = 0
        code, out, err = await _psql(url, r"\set FETCH_COUNT 10",
                                     "SELECT id, 1 / (10 - id) FROM items")
        assert code != 0 and "division by zero" in err
        assert out.splitlines()[:10] == [f"{i}|{1 // (10 - i)}" for i in range(10)]
        assert pages.requests == 20 // PAGE
