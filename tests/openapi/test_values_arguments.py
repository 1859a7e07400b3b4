"""Arguments of every type, enum values kept, and FastAPI's names, over the wire, on an
API of the tests' own (FastAPI, its operationIds as FastAPI makes them:
``<name>_<path>_<method>``).

- ``GET /items`` (``?kind``, an enum with a description of its own, the rows' own field
  too; ``?names``, an array parameter no row holds) and ``GET /items/{item_id}``: one
  list-and-get table.
- ``POST /items``, ``PATCH /items/{item_id}`` (and its DELETE): bodies with arrays,
  objects and nested arrays.
- ``POST /search``: a declared read whose body takes an array, an object and an array
  of arrays.
- ``GET /filtered``: an object parameter and an array of objects (declared by hand).
The API's log says what each request carried.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import psycopg
import pytest
from fastapi import FastAPI, Query, Request
from pydantic import BaseModel

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, Tables, tables_of


class Item(BaseModel):
    id: int
    name: str
    kind: Literal["tool", "toy"]
    tags: list[str] = []
    meta: dict[str, Any] = {}


class ItemIn(BaseModel):
    name: str
    kind: Literal["tool", "toy"] = "tool"
    tags: list[str] = []
    meta: dict[str, Any] = {}
    grid: list[list[int]] = []


class ItemPatch(BaseModel):
    name: str | None = None
    tags: list[str] | None = None
    meta: dict[str, Any] | None = None


class SearchIn(BaseModel):
    names: list[str] = []
    scope: dict[str, Any] = {}
    grid: list[list[int]] = []


class Hit(BaseModel):
    said: str


@dataclass
class Items:
    items: dict[int, Item] = field(default_factory=lambda: {
        1: Item(id=1, name="x1", kind="tool"), 2: Item(id=2, name="x2", kind="toy"),
        3: Item(id=3, name="x3", kind="toy")})
    log: list[tuple[str, str, Any]] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI(title="Items")

        @app.middleware("http")
        async def logged(request: Request, call_next: Any) -> Any:
            if request.url.path != "/openapi.json":
                body = await request.body()
                self.log.append((request.method, str(request.url.path) + (
                    f"?{request.url.query}" if request.url.query else ""),
                    json.loads(body) if body else None))
            return await call_next(request)

        @app.get("/items")
        def list_items(kind: Annotated[Literal["tool", "toy"] | None, Query(
                           description="Only the items of this kind")] = None,
                       names: Annotated[list[str] | None, Query()] = None) -> list[Item]:
            return [i for i in self.items.values() if kind in (None, i.kind)
                    and (not names or i.name in names)]

        @app.get("/items/{item_id}")
        def get_item(item_id: int) -> Item:
            return self.items[item_id]

        @app.post("/items", status_code=201)
        def create_item(body: ItemIn) -> Item:
            new = Item(id=max(self.items) + 1, **body.model_dump(exclude={"grid"}))
            self.items[new.id] = new
            return new

        @app.patch("/items/{item_id}")
        def update_item(item_id: int, body: ItemPatch) -> Item:
            self.items[item_id] = self.items[item_id].model_copy(
                update=body.model_dump(exclude_none=True))
            return self.items[item_id]

        # Parameters FastAPI cannot declare: an object (form style: each property a
        # parameter of its own) and an array of objects.
        @app.get("/filtered", openapi_extra={"parameters": [
            {"name": "f", "in": "query", "schema": {"type": "object"}},
            {"name": "q", "in": "query", "schema": {"type": "array",
                                                    "items": {"type": "object"}}}]})
        def filtered(request: Request) -> list[Hit]:
            return [Hit(said=str(request.url.query))]

        @app.delete("/items/{item_id}", status_code=204)
        def delete_item(item_id: int) -> None:
            self.items.pop(item_id, None)

        @app.post("/search")
        def search(body: SearchIn) -> list[Hit]:
            return [Hit(said=json.dumps(body.model_dump(), sort_keys=True))]

        return app


@asynccontextmanager
async def items_api(sidecar: Any, **config: Any) -> AsyncIterator[tuple[Items, Tables]]:
    api = Items()
    async with http_served(api.app()) as url, \
            tables_of(Api(url, None), sidecar, **config) as tables:  # type: ignore[arg-type]
        api.log.clear()
        yield api, tables


async def test_fastapi_names_are_shortened(sidecar: Any) -> None:
    async with items_api(sidecar) as (_, t), await t.connect() as conn:
        names = {r[0] for r in await rows(conn, "SELECT name FROM scratchpad.resources "
                                          "WHERE namespace = 't'")}
        assert names == {"t_list_items", "t_search", "t_filtered"}, names
        [[said]] = await rows(conn, "SELECT description FROM scratchpad.resources "
                              "WHERE name = 't_list_items'")
        assert "select by id GET /items/{item_id}" in said
        assert "update PATCH /items/{item_id}" in said


async def test_an_enum_keeps_its_values_where_a_parameter_and_a_field_merge(
        sidecar: Any) -> None:
    async with items_api(sidecar) as (_, t), await t.connect() as conn:
        [[said]] = await rows(conn, "SELECT description FROM information_schema.columns c "
                              "JOIN pg_description d ON d.objoid = 't_list_items'::regclass "
                              "AND d.objsubid = c.ordinal_position "
                              "WHERE c.table_name = 't_list_items' AND column_name = 'kind'")
        assert "Only the items of this kind" in said
        assert "one of: tool, toy" in said


async def test_arrays_and_objects_are_arguments(sidecar: Any) -> None:
    async with items_api(sidecar, reads=["POST /search"]) as (api, t), \
            await t.connect() as conn:
        # A jsonb array is one value: one call, sent whole.
        said = await rows(conn, """SELECT said FROM t_search
                                   WHERE names = '["x1", "x2"]' AND grid = '[[1, 2], [3]]'
                                   AND scope = '{"a": {"b": [1]}}'""")
        assert [json.loads(s) for s, in said] == [
            {"grid": [[1, 2], [3]], "names": ["x1", "x2"], "scope": {"a": {"b": [1]}}}]
        assert len(api.log) == 1
        # A SQL array made JSON: the same value.
        said = await rows(conn, "SELECT said FROM t_search "
                          "WHERE names = to_jsonb(ARRAY['x1', 'x2'])")
        assert json.loads(said[0][0])["names"] == ["x1", "x2"]
        assert len(api.log) == 2
        # An IN list of them: one call per value.
        api.log.clear()
        said = await rows(conn, """SELECT said FROM t_search
                                   WHERE names IN ('["x1"]', '["x2", "x3"]')""")
        assert sorted(json.loads(s)["names"] for s, in said) == [["x1"], ["x2", "x3"]]
        assert len(api.log) == 2
        # An array query parameter: = one value, IN (or = ANY of an array) the list.
        api.log.clear()
        assert await rows(conn, "SELECT name FROM t_list_items WHERE names = 'x2'"
                          ) == [("x2",)]
        assert await rows(conn, "SELECT name FROM t_list_items WHERE names IN ('x1', 'x3') "
                          "ORDER BY name") == [("x1",), ("x3",)]
        assert await rows(conn, "SELECT name FROM t_list_items "
                          "WHERE names = ANY(ARRAY['x1', 'x2']) ORDER BY name"
                          ) == [("x1",), ("x2",)]
        assert [p for _, p, _ in api.log] == ["/items?names=x2", "/items?names=x1",
                                              "/items?names=x3", "/items?names=x1",
                                              "/items?names=x2"]


async def test_a_write_sends_arrays_and_objects_whole(sidecar: Any) -> None:
    async with items_api(sidecar) as (api, t), await t.connect() as conn:
        await conn.execute("""INSERT INTO t_list_items (name, kind, tags, meta, grid)
                              VALUES ('x4', 'toy', '["a", "b"]', '{"k": {"n": [1]}}',
                                      '[[1], [2, 3]]')""")
        assert api.log[-1] == ("POST", "/items", {
            "name": "x4", "kind": "toy", "tags": ["a", "b"], "meta": {"k": {"n": [1]}},
            "grid": [[1], [2, 3]]})
        await conn.execute("""UPDATE t_list_items SET tags = '["c"]', meta = '{"k": [2]}'
                              WHERE id = 4""")
        assert api.log[-1] == ("PATCH", "/items/4", {"tags": ["c"], "meta": {"k": [2]}})
        assert api.items[4].tags == ["c"]


async def test_a_value_that_cannot_be_sent_says_why(sidecar: Any) -> None:
    async with items_api(sidecar) as (api, t), await t.connect() as conn:
        # An object parameter: each property a parameter of its own.
        assert await rows(conn, """SELECT said FROM t_filtered WHERE f = '{"a": 1, "b": "x"}'"""
                          ) == [("a=1&b=x",)]
        api.log.clear()
        # A SQL array where a jsonb value goes: Postgres says so, with a HINT.
        with pytest.raises(psycopg.Error) as err:
            await conn.execute("INSERT INTO t_list_items (name, tags) "
                               "VALUES ('x5', ARRAY['a'])")
        assert err.value.sqlstate == "42804" and err.value.diag.message_hint
        # What a query string cannot carry: 22023, naming it, before any request.
        for where in ("""f = '{"a": {"b": 1}}'""", """q = '{"a": 1}'"""):
            with pytest.raises(psycopg.errors.InvalidParameterValue) as err2:
                await conn.execute(f"SELECT * FROM t_filtered WHERE {where}")
            assert "GET /filtered: the query parameter" in str(err2.value)
            assert err2.value.diag.message_hint
        assert api.log == []


async def test_explain_of_a_write_shows_its_requests_filled_in(sidecar: Any) -> None:
    async with items_api(sidecar) as (api, t), await t.connect() as conn:
        async def plan(sql: str) -> str:
            return "\n".join(r[0] for r in await rows(conn, "EXPLAIN " + sql))

        said = await plan("""INSERT INTO t_list_items (name, tags, meta)
                             VALUES ('x9', '["a"]', '{"k": 1}'),
                                    ('Bearer ann-token', NULL, NULL)""")
        assert (f'Request: POST {t.api.url}/items {{"name": "x9", "tags": ["a"], '
                '"meta": {"k": 1}} (one request per row)') in said
        assert "ann-token" not in said and '{"name": "***"' in said
        said = await plan("UPDATE t_list_items SET name = 'y' WHERE id = 2")
        assert (f'Request: PATCH {t.api.url}/items/2 {{"name": "y"}} '
                "(one request per row it changes)") in said
        said = await plan("DELETE FROM t_list_items WHERE id IN (2, 3)")
        assert f"Request: DELETE {t.api.url}/items/2 " in said
        assert f"Request: DELETE {t.api.url}/items/3 " in said
        # What the text does not fix stays a template.
        said = await plan("DELETE FROM t_list_items WHERE name = 'x1'")
        assert f"Request: DELETE {t.api.url}/items/{{item_id}} " in said
        assert api.log == []
