"""The call planner, over the wire: keys fed by joins, LATERAL, correlated subqueries and
CTEs; filters with their operators; LIMIT; and no call made twice. Every answer is
checked against plain Postgres holding the same data, and each statement's calls are
counted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_scratchpad.server import Database

from ..fix_server import dsn, fetch, serving
from .fix_planner import World, load_plain, web_rows

PLAIN = "plain_planner"


@pytest.fixture(scope="module")
async def env(sidecar: Any) -> AsyncIterator[tuple[World, str, asyncpg.Connection]]:
    world = World()
    db = await Database.create(world.resources(), sidecar=sidecar, database="test_planner")
    try:
        async with serving(db) as srv:
            plain = await asyncpg.connect(sidecar.dsn, database="postgres")
            await load_plain(plain, PLAIN, world)
            await plain.execute(f"SET search_path = {PLAIN}")
            yield world, dsn(srv), plain
            await plain.close()
    finally:
        await db.close()


async def plain_rows(plain: asyncpg.Connection, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in await plain.fetch(sql, *params)]


# (statement, the calls it makes: {resource: count})
COMPOSED = [
    ("SELECT t.title, w.url FROM tasks t JOIN web w ON w.query = t.title ORDER BY 1, 2",
     {"tasks": 1, "web": 4}),
    ("SELECT tasks.title, web.rank FROM tasks, web WHERE web.query = tasks.title "
     "AND tasks.status = 'todo' ORDER BY 1, 2", {"tasks": 1, "web": 3}),
    ("SELECT t.id, x.url FROM tasks t, LATERAL (SELECT * FROM web WHERE query = t.title "
     "ORDER BY rank LIMIT 1) x ORDER BY 1", {"tasks": 1, "web": 4}),
    ("SELECT p.name, (SELECT bio FROM profile WHERE person_id = p.id) FROM people p "
     "ORDER BY 1", {"people": 1, "profile": 4}),
    ("SELECT name FROM people p WHERE EXISTS (SELECT 1 FROM profile WHERE person_id = p.id) "
     "ORDER BY 1", {"people": 1, "profile": 4}),
    ("WITH r AS (SELECT id FROM people WHERE team = 'red') SELECT * FROM profile "
     "WHERE person_id IN (SELECT id FROM r) ORDER BY 1", {"people": 1, "profile": 2}),
    ("SELECT t.id, w.url FROM tasks t LEFT JOIN web w ON w.query = t.title ORDER BY 1, 2",
     {"tasks": 1, "web": 4}),
    ("SELECT p.name, f.bio, w.url FROM people p JOIN profile f ON f.person_id = p.id "
     "JOIN web w ON w.query = f.bio ORDER BY 1, 3", {"people": 1, "profile": 4, "web": 3}),
    ("SELECT s.title, w.rank FROM (SELECT title FROM tasks WHERE status = 'done') s "
     "JOIN web w ON w.query = s.title ORDER BY 1, 2", {"tasks": 1, "web": 2}),
    ("SELECT x FROM counter_v WHERE x IN (SELECT x FROM counter_v) ORDER BY 1",
     {"counter_v": 1}),
]


@pytest.mark.parametrize(("sql", "calls"), COMPOSED, ids=range(len(COMPOSED)))
async def test_a_composed_statement_is_right_and_calls_each_tool_once_per_argument(env, sql,
                                                                                   calls):
    world, dsn, plain = env
    world.reset()
    got = await fetch(dsn, sql)
    assert got == await plain_rows(plain, sql)
    assert {name: world.count(name) for name in calls} == calls
    assert len(set(world.calls)) == len(world.calls)  # no call made twice


async def test_explain_names_the_source_of_each_key_and_calls_nothing(env):
    world, dsn, _ = env
    world.reset()
    for sql, _ in COMPOSED:
        lines = [r[0] for r in await fetch(dsn, "EXPLAIN " + sql)]
        assert world.calls == [], sql
        for line in lines:
            if line.startswith(("Resource web", "Resource profile")):
                assert "keys: " in line and ("one call per distinct" in line
                                             or "from the rows of" in line), line
    lines = [r[0] for r in await fetch(dsn, "EXPLAIN SELECT * FROM web WHERE query = %s",
                                       "x")]
    assert lines[0].startswith("Resource web (volatile, read): keys: query from ")


@pytest.mark.parametrize("literal", ["'it''s a\\b é'", "''", "'-5'"])
async def test_a_constant_key_reaches_the_tool_and_explain_as_written(env, literal):
    world, dsn, _ = env
    value = literal[1:-1].replace("''", "'")
    world.reset()
    sql = f"SELECT url FROM web WHERE query = {literal} ORDER BY 1"
    assert await fetch(dsn, sql) == [(row["url"],) for row in web_rows(value)]
    assert world.calls == [("web", f"Bindings({ {'query': value} !r})")]
    lines = [r[0] for r in await fetch(dsn, "EXPLAIN " + sql)]
    assert lines[0] == f"Resource web (volatile, read): keys: query from {literal}; calls: 1"


async def test_a_key_from_a_constant_expression(env):
    world, dsn, plain = env
    sql = ("SELECT url FROM web WHERE query = CASE %s::int WHEN 1 THEN 'postgres' "
           "ELSE 'sql' END ORDER BY 1")
    for choice, query in ((1, "postgres"), (2, "sql")):
        world.reset()
        got = await fetch(dsn, sql, choice)
        assert got == await plain_rows(
            plain, "SELECT url FROM web WHERE query = $1 ORDER BY 1", query)
        assert world.calls == [("web", f"Bindings({{'query': '{query}'}})")]


async def test_two_hundred_point_lookups_on_a_keyless_immutable_resource_are_one_call(env):
    world, dsn, _ = env
    world.reset()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for i in range(0, 2000, 10):
            cur = await conn.execute("SELECT label FROM big WHERE id = %s", (i,))
            assert await cur.fetchall() == [(f"label {i}",)]
    assert world.count("big") == 1


async def test_filters_reach_the_tool_with_their_operators(env):
    world, dsn, _ = env
    world.reset()
    await fetch(dsn, "SELECT * FROM events WHERE calendar = 'c' AND at BETWEEN 10 AND 30 "
                    "AND title LIKE 'e%' AND room = 'x'")
    [b] = world.bindings
    assert b.where("at") == [(">=", 10), ("<=", 30)]
    assert b.where("title") == [("like", "e%")]
    assert b.where("room") == [] and not b.has("room")  # not declared: never reaches it
    assert b.limit is None
    world.reset()
    rows = await fetch(dsn, "SELECT * FROM events WHERE calendar = 'x' LIMIT 5")
    assert len(rows) == 5 and world.bindings[0].limit == 5
    world.reset()
    await fetch(dsn, "SELECT * FROM events WHERE calendar = 'x' AND room = 'x' LIMIT 5")
    assert world.bindings[0].limit is None  # room is applied by Postgres: no pushed limit
    world.reset()
    await fetch(dsn, "SELECT * FROM events WHERE calendar = 'x' ORDER BY at LIMIT 5")
    assert world.bindings[0].limit is None
    world.reset()
    rows = await fetch(dsn, "SELECT * FROM events WHERE calendar = 'x' AND at IN (5, 10, 15) "
                           "AND at <> 10 ORDER BY at")
    assert [r[1] for r in rows] == [5, 15]
    assert world.bindings[0].where("at") == [("in", [5, 10, 15]), ("<>", 10)]
    assert world.count("events") == 1  # a filter's IN list is one call


@pytest.mark.parametrize("resource", ["pages", "apages"])
async def test_a_generator_under_limit_is_asked_for_no_more_rows(env, resource):
    world, dsn, _ = env
    world.reset()
    rows = await fetch(dsn, f"SELECT n FROM {resource} WHERE q = 'x' LIMIT 3")
    assert rows == [(0,), (1,), (2,)]
    assert world.pulled[resource] == 3
    world.reset()
    rows = await fetch(dsn, f"SELECT n FROM {resource} WHERE q = 'x' LIMIT 2 OFFSET 4")
    assert rows == [(4,), (5,)] and world.pulled[resource] == 6


async def test_a_key_nothing_can_feed_names_a_join_that_would(env):
    _, dsn, _ = env
    with pytest.raises(psycopg.errors.InvalidParameterValue) as info:
        await fetch(dsn, "SELECT * FROM tasks t JOIN web w ON w.url = t.title")
    hint = info.value.diag.message_hint or ""
    assert "w.query = t." in hint


TEMPLATES = [
    "SELECT t.title, w.url FROM tasks t JOIN web w ON w.query = t.title "
    "WHERE t.status = '{status}' ORDER BY 1, 2",
    "SELECT t.id, x.rank FROM tasks t, LATERAL (SELECT rank FROM web WHERE query = t.title "
    "ORDER BY rank DESC LIMIT 1) x WHERE t.id > {n} ORDER BY 1",
    "SELECT p.name, (SELECT count(*) FROM profile WHERE person_id = p.id) FROM people p "
    "WHERE p.team = '{team}' ORDER BY 1",
    "WITH r AS (SELECT id FROM people WHERE team <> '{team}') "
    "SELECT person_id, bio FROM profile WHERE person_id IN (SELECT id FROM r) ORDER BY 1",
    "SELECT p.name, f.bio, w.rank FROM people p JOIN profile f ON f.person_id = p.id "
    "JOIN web w ON w.query = f.bio WHERE p.id < {n} ORDER BY 1, 3",
    "SELECT count(*) FROM tasks t WHERE EXISTS (SELECT 1 FROM web w WHERE w.query = t.title "
    "AND w.rank = 2)",
]
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "postgres", "sql", "x", "y"])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
async def test_random_statements_over_random_feeders_agree_with_postgres(env, data):
    world, dsn, plain = env
    world.tasks = [{"id": i, "title": data.draw(WORDS), "status": data.draw(
        st.sampled_from(["todo", "done"]))} for i in range(data.draw(st.integers(0, 6)))]
    world.people = [{"id": i, "name": f"n{i}", "team": data.draw(
        st.sampled_from(["red", "blue"]))} for i in data.draw(
        st.sets(st.integers(1, 7), max_size=5))]
    await load_plain(plain, PLAIN, world)
    sql = data.draw(st.sampled_from(TEMPLATES)).format(
        status=data.draw(st.sampled_from(["todo", "done"])), n=data.draw(st.integers(0, 6)),
        team=data.draw(st.sampled_from(["red", "blue"])))
    world.reset()
    assert await fetch(dsn, sql) == await plain_rows(plain, sql), sql
    assert len(set(world.calls)) == len(world.calls), (sql, world.calls)
