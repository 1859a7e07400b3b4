"""A table as the mapping plans it (``_plan``), as a client sees it: which parameters are
columns (never the headers a request is framed with or that carry credentials), and
what each column is in the API, in its comment."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi import FastAPI, Header
from pydantic import BaseModel

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, Tables, tables_of


class Note(BaseModel):
    id: int
    topic: str
    text: str


def _app() -> FastAPI:
    app = FastAPI(title="Notes")

    @app.get("/notes", operation_id="notes")
    def notes(topic: str, x_trace: str | None = Header(None),
              x_api_key: str | None = Header(None),
              idempotency_key: str | None = Header(None)) -> list[Note]:
        return [Note(id=1, topic=topic, text=f"trace {x_trace}")]

    return app


@pytest.fixture(scope="module")
async def t(sidecar: Any) -> AsyncIterator[Tables]:
    async with http_served(_app()) as url, tables_of(
            Api(url, None), sidecar) as tables:  # type: ignore[arg-type]
        yield tables


async def test_headers_of_the_request_itself_are_never_columns(t):
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT column_name FROM information_schema.columns "
                          "WHERE table_name = 't_notes' ORDER BY ordinal_position") == [
            ("id",), ("topic",), ("text",), ("x_trace",)]
        assert await rows(conn, "SELECT text FROM t_notes WHERE topic = 'a' "
                          "AND x_trace = 'z'") == [("trace z",)]


async def test_each_column_says_what_it_is_in_the_api(t):
    async with await t.connect() as conn:
        [(keys, filters, columns)] = await rows(
            conn, "SELECT keys, filters, columns FROM scratchpad.resources "
            "WHERE name = 't_notes'")
    assert (keys, filters) == ("topic", "x_trace")
    lines = columns.splitlines()
    # The role follows the column's own description (the row field's title).
    assert ("topic text, required key: Required key: the query parameter topic. Topic (the "
            "query parameter topic and the rows' own topic (a row whose topic differs is not "
            "returned))") in lines
    assert any(line.startswith("x_trace text, filter: Optional filter: the header "
                                "parameter x-trace.") for line in lines), lines
