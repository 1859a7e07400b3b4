"""EXPLAIN ANALYZE through the wire: a join's calls per resource with their rows and time,
then the sidecar's own EXPLAIN ANALYZE; FORMAT JSON; a write inside BEGIN is staged, not
fired, and outside a transaction block it fires."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.redaction import MASK, remember
from glove_scratchpad.resources import Bindings, define_resource

from ..fix_server import dsn as dsn_of
from ..fix_server import serving


class Task(BaseModel):
    id: int
    title: str


class Hit(BaseModel):
    query: str
    url: str


@pytest.fixture
async def served(make_db: Any) -> AsyncIterator[tuple[str, dict[str, list[Any]]]]:
    seen: dict[str, list[Any]] = {"tasks": [], "web": [], "insert": []}

    def tasks(b: Bindings) -> list[dict[str, Any]]:
        seen["tasks"].append(1)
        return [{"id": i, "title": f"t{i}"} for i in (1, 2, 3)]

    def web(b: Bindings) -> list[dict[str, Any]]:
        seen["web"].append(b.one("query"))
        return [{"query": b.one("query"), "url": f"https://x/{b.one('query')}"}]

    def insert(rows: list[Any]) -> None:
        seen["insert"].extend(rows)

    db = await make_db([
        define_resource("tasks", schema=Task, volatility="volatile", select=tasks,
                        insert=insert, primary_key=["id"]),
        define_resource("web", schema=Hit, keys=["query"], volatility="volatile", select=web),
    ])
    async with serving(db, writes=True) as server:
        yield dsn_of(server), seen


JOIN = "SELECT t.title, w.url FROM tasks t JOIN web w ON w.query = t.title WHERE t.id < 3"


async def test_a_join_shows_each_resources_calls_then_the_sidecars_plan(
        served: tuple[str, dict[str, list[Any]]]) -> None:
    dsn, seen = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("EXPLAIN ANALYZE " + JOIN)
        text = "\n".join(r[0] for r in await cur.fetchall())
        assert len(seen["tasks"]) == 1 and sorted(seen["web"]) == ["t1", "t2"]  # it ran
        assert "tasks select (no arguments): called, calls=1 rows=3 time=" in text
        assert "web select (query = 't1'): called, calls=1 rows=1 time=" in text
        assert "web select (query = 't2'): called, calls=1 rows=1 time=" in text
        assert "Sidecar:" in text and "actual" in text and "Execution Time" in text

        cur = await conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + JOIN)
        doc = json.loads((await cur.fetchone())[0])[0]
        calls = {(c["Resource"], json.dumps(c["Arguments"])): c for c in doc["Resource Calls"]}
        assert calls["web", '{"query": "t1"}']["Rows"] == 1
        assert all(c["Time"] >= 0 and c["Source"] == "called" for c in calls.values())
        assert "Plan" in doc["Sidecar"][0] and "Execution Time" in doc["Sidecar"][0]


async def test_a_write_inside_begin_is_staged_and_outside_fires(
        served: tuple[str, dict[str, list[Any]]]) -> None:
    dsn, seen = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("BEGIN")
        cur = await conn.execute("EXPLAIN ANALYZE INSERT INTO tasks (id, title) VALUES (9, 'n')")
        text = "\n".join(r[0] for r in await cur.fetchall())
        assert "Write: INSERT 0 1 (staged, not fired)" in text
        assert seen["insert"] == []
        cur = await conn.execute("SELECT count(*) FROM scratchpad.staged")
        assert await cur.fetchone() == (1,)
        await conn.execute("ROLLBACK")
        assert seen["insert"] == []
        cur = await conn.execute("EXPLAIN ANALYZE INSERT INTO tasks (id, title) VALUES (9, 'n')")
        text = "\n".join(r[0] for r in await cur.fetchall())
        assert "Write: INSERT 0 1 (fired)" in text
        assert len(seen["insert"]) == 1


async def test_a_secret_given_as_an_argument_is_redacted(
        served: tuple[str, dict[str, list[Any]]]) -> None:
    dsn, seen = served
    remember("tok-3f9a1c77e2b54d08")
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for sql in ("EXPLAIN ANALYZE SELECT url FROM web WHERE query = 'tok-3f9a1c77e2b54d08'",
                    "EXPLAIN (ANALYZE, FORMAT JSON) SELECT url FROM web "
                    "WHERE query = 'tok-3f9a1c77e2b54d08'"):
            cur = await conn.execute(sql)
            text = "\n".join(r[0] for r in await cur.fetchall())
            assert "tok-3f9a1c77e2b54d08" not in text and MASK in text
    assert seen["web"] == ["tok-3f9a1c77e2b54d08"] * 2
