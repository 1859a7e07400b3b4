"""An HTTP read whose later page fails (a 500) or does not answer in time fails, and its
call is audited (``scratchpad.calls``) and counted (``glove_tool_calls_total``) as
failed, though its first page came back: the audit row and the metric of a lazy read
carry the outcome of the whole read. An API of the test's own, paged by page number."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Annotated, Any

import psycopg
import pytest
from fastapi import FastAPI, HTTPException, Query
from pydantic import BaseModel

from ..fix_http import http_served
from ..fix_metrics import counted
from ..fix_server import rows
from .api_app import Recorder
from .fix_api import Api, Tables, tables_of

ITEMS = 30
PAGE = 10  # the page size the server asks for (max_page_size): 3 pages
TIMEOUT = 0.3  # seconds the API's requests may take


class Item(BaseModel):
    n: int
    label: str


def _page(page: int, per_page: int) -> list[Item]:
    start = (page - 1) * per_page
    return [Item(n=n, label=f"item {n}") for n in range(start + 1,
                                                        min(start + per_page, ITEMS) + 1)]


def _app() -> FastAPI:
    app = FastAPI(title="Pages that fail later")

    @app.get("/broken/items", operation_id="brokenItems")
    def broken(page: int = 1, per_page: Annotated[int, Query(le=100)] = 100) -> list[Item]:
        if page > 1:
            raise HTTPException(500, "the database behind page 2 is gone")
        return _page(page, per_page)

    @app.get("/slow/items", operation_id="slowItems")
    async def slow(page: int = 1, per_page: Annotated[int, Query(le=100)] = 100
                   ) -> list[Item]:
        if page > 1:
            await asyncio.sleep(TIMEOUT * 4)
        return _page(page, per_page)

    return app


@pytest.fixture(scope="module")
async def t(sidecar: Any) -> AsyncIterator[Tables]:
    async with http_served(_app()) as url, tables_of(
            Api(url, Recorder()), sidecar, retries=0, timeout=TIMEOUT,
            max_page_size=PAGE) as tables:
        yield tables


@pytest.mark.parametrize(("table", "message"), [
    ("t_broken_items", "the API failed (500 Internal Server Error)"),
    ("t_slow_items", f"the API did not answer within {TIMEOUT:g} s")])
async def test_a_read_failing_on_a_later_page_is_audited_and_counted_as_failed(
        t, monkeypatch, table, message):
    sample = counted(monkeypatch)
    calls = functools.partial(sample, "glove_tool_calls_total", resource=table,
                              verb="select")
    before = {s: calls(outcome=s) for s in ("ok", "error")}
    async with await t.connect() as conn:
        with pytest.raises(psycopg.Error) as info:
            await conn.execute(f"SELECT count(*) FROM {table}")
        assert message in str(info.value)
        # One page is a whole read: its rows counted.
        assert await rows(conn, f"SELECT n FROM {table} LIMIT 3") == [(1,), (2,), (3,)]
        audited = await rows(conn, "SELECT verb, status, error, rows FROM scratchpad.calls "
                             "WHERE resource = %s ORDER BY at", table)
    select = [(status, rows_) for verb, status, _, rows_ in audited if verb == "select"]
    assert select == [("error", None), ("ok", 3)]
    [error] = [e for verb, status, e, _ in audited if verb == "select" and status == "error"]
    assert message in error
    # The requests it made: the first page answered, the second did not.
    requests = [status for verb, status, _, _ in audited if verb == "http GET"]
    assert requests[:2] == ["ok", "timeout" if "slow" in table else "error"]
    assert calls(outcome="error") - before["error"] == 1
    assert calls(outcome="ok") - before["ok"] == 1
