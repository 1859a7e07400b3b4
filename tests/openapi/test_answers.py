"""An API's answers read as rows (``_answers``), over the wire: an object the document
leaves open (``additionalProperties``: FastAPI's ``-> list[dict]``, ``-> dict[str, int]``,
a model that allows more) is a row holding the whole object, never NULL. (A row without
a required field: test_api_tables.py; a write's answer: test_api_honest.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, Tables, tables_of
from .styles_app import make_app


@pytest.fixture(scope="module")
async def t(sidecar: Any) -> AsyncIterator[Tables]:
    app, _ = make_app()
    api = Api(url="", rec=None)  # type: ignore[arg-type]  # its requests are not counted here
    async with http_served(app) as api.url, tables_of(
            api, sidecar, include=["GET /dicts", "GET /counts", "GET /open"]) as tables:
        yield tables


async def columns(conn: Any, table: str) -> list[tuple[str, str]]:
    return await rows(conn, "SELECT column_name, data_type FROM information_schema.columns "
                      "WHERE table_name = %s ORDER BY ordinal_position", table)


async def test_a_list_of_dicts_is_rows_of_whole_objects(t):
    async with await t.connect() as conn:
        assert await columns(conn, "t_dicts") == [("value", "jsonb")]
        assert await rows(conn, "SELECT value FROM t_dicts ORDER BY value->>'id'") == [
            ({"id": 1, "name": "one", "tags": ["a"]},), ({"id": 2, "deep": {"x": None}},)]


async def test_a_map_is_one_row_holding_it(t):
    async with await t.connect() as conn:
        assert await columns(conn, "t_counts") == [("value", "jsonb")]
        assert await rows(conn, "SELECT value, (value->>'apples')::int FROM t_counts") == [
            ({"apples": 3, "pears": 0}, 3)]


async def test_an_open_object_has_its_properties_beside_the_whole(t):
    async with await t.connect() as conn:
        assert await columns(conn, "t_open") == [("id", "bigint"), ("value", "jsonb")]
        assert await rows(conn, "SELECT id, value FROM t_open ORDER BY id") == [
            (1, {"id": 1, "colour": "red"}), (2, {"id": 2})]
