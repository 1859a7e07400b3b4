"""A small world for the planner: feeders, fed tools, filters, generators, and the same
data in plain Postgres tables to check every answer against.

- ``tasks`` and ``people`` have no keys (``status``/``team`` are filters);
- ``web`` (key ``query``) and ``profile`` (key ``person_id``) are fed by them;
- ``events`` records the Bindings it is given; ``pages``/``apages`` are a sync and
  an async generator that count what they yield; ``counter_v`` is volatile;
  ``big`` is immutable and key-less.

Every resolver records its calls as (resource, arguments), so a test can state
how many calls a statement made and that none was made twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from glove_scratchpad.resources import Bindings, Resource, define_resource


def web_rows(query: str) -> list[dict[str, Any]]:
    """What the search tool answers: a few hits for most queries, none for some."""
    return [{"query": query, "url": f"https://{query}.example/{i}", "rank": i}
            for i in range(1, len(query) % 3 + 1)]


def profile_rows(person_id: int) -> list[dict[str, Any]]:
    return [{"person_id": person_id, "bio": f"bio{person_id}"}] if person_id % 2 else []


@dataclass
class World:
    tasks: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": 1, "title": "alpha", "status": "todo"},
        {"id": 2, "title": "beta", "status": "done"},
        {"id": 3, "title": "alpha", "status": "done"},
        {"id": 4, "title": "gamma", "status": "todo"},
        {"id": 5, "title": "delta", "status": "todo"},
    ])
    people: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": 1, "name": "Ann", "team": "red"},
        {"id": 2, "name": "Bob", "team": "blue"},
        {"id": 3, "name": "Cy", "team": "red"},
        {"id": 5, "name": "Di", "team": "green"},
    ])
    calls: list[tuple[str, str]] = field(default_factory=list)
    bindings: list[Bindings] = field(default_factory=list)
    pulled: Counter[str] = field(default_factory=Counter)

    def record(self, name: str, b: Bindings) -> None:
        self.calls.append((name, repr(b)))

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.calls if n == name)

    def reset(self) -> None:
        self.calls.clear()
        self.bindings.clear()
        self.pulled.clear()

    def resources(self) -> list[Resource]:
        def tasks(b: Bindings) -> list[dict[str, Any]]:
            self.record("tasks", b)
            return list(self.tasks)

        def people(b: Bindings) -> list[dict[str, Any]]:
            self.record("people", b)
            return list(self.people)

        def web(b: Bindings) -> list[dict[str, Any]]:
            self.record("web", b)
            return web_rows(b.one("query"))

        def profile(b: Bindings) -> list[dict[str, Any]]:
            self.record("profile", b)
            return profile_rows(b.one("person_id"))

        def events(b: Bindings) -> list[dict[str, Any]]:
            self.record("events", b)
            self.bindings.append(b)
            return [{"calendar": b.one("calendar"), "at": at, "title": f"e{at}", "room": "x"}
                    for at in range(0, 50, 5)]

        def pages(b: Bindings) -> Iterator[dict[str, Any]]:
            self.record("pages", b)
            for i in range(1000):
                self.pulled["pages"] += 1
                yield {"q": b.one("q"), "n": i}

        async def apages(b: Bindings) -> AsyncIterator[dict[str, Any]]:
            self.record("apages", b)
            for i in range(1000):
                self.pulled["apages"] += 1
                await asyncio.sleep(0)
                yield {"q": b.one("q"), "n": i}

        def counter(b: Bindings) -> list[dict[str, Any]]:
            self.record("counter_v", b)
            return [{"x": 1}, {"x": 2}]

        def big(b: Bindings) -> list[dict[str, Any]]:
            self.record("big", b)
            return [{"id": i, "label": f"label {i}"} for i in range(2000)]

        text, bigint = "text", "bigint"
        return [
            define_resource("tasks", columns=[("id", bigint), ("title", text),
                                              ("status", text)],
                            filters=["status"], volatility="volatile", select=tasks),
            define_resource("people", columns=[("id", bigint), ("name", text), ("team", text)],
                            filters=["team"], volatility="volatile", select=people),
            define_resource("web", columns=[("query", text), ("url", text), ("rank", bigint)],
                            keys=["query"], volatility="volatile", select=web),
            define_resource("profile", columns=[("person_id", bigint), ("bio", text)],
                            keys=["person_id"], volatility="volatile", select=profile),
            define_resource("events", columns=[("calendar", text), ("at", bigint),
                                               ("title", text), ("room", text)],
                            keys=["calendar"], filters=["at", "title"], volatility="volatile",
                            select=events),
            define_resource("pages", columns=[("q", text), ("n", bigint)], keys=["q"],
                            volatility="volatile", select=pages),
            define_resource("apages", columns=[("q", text), ("n", bigint)], keys=["q"],
                            volatility="volatile", select=apages),
            define_resource("counter_v", columns=[("x", bigint)], volatility="volatile",
                            select=counter),
            define_resource("big", columns=[("id", bigint), ("label", text)],
                            volatility="immutable", select=big),
        ]


# The key values the plain tables hold rows for: every value a statement may feed.
WEB_QUERIES = ("alpha", "beta", "gamma", "delta", "postgres", "sql", "bio1", "bio3", "bio5",
               "x", "y")


async def load_plain(conn: asyncpg.Connection, schema: str, world: World) -> None:
    """The world's data as plain tables in ``schema``: the answer Postgres would give."""
    await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
    await conn.execute(
        f"CREATE TABLE {schema}.tasks (id bigint, title text, status text);"
        f"CREATE TABLE {schema}.people (id bigint, name text, team text);"
        f"CREATE TABLE {schema}.web (query text, url text, rank bigint);"
        f"CREATE TABLE {schema}.profile (person_id bigint, bio text);"
        f"CREATE TABLE {schema}.counter_v (x bigint);")
    await conn.copy_records_to_table("tasks", schema_name=schema, records=[
        (t["id"], t["title"], t["status"]) for t in world.tasks])
    await conn.copy_records_to_table("people", schema_name=schema, records=[
        (p["id"], p["name"], p["team"]) for p in world.people])
    queries = set(WEB_QUERIES) | {t["title"] for t in world.tasks}
    queries |= {r["bio"] for p in world.people for r in profile_rows(p["id"])}
    await conn.copy_records_to_table("web", schema_name=schema, records=[
        (r["query"], r["url"], r["rank"]) for q in sorted(queries) for r in web_rows(q)])
    await conn.copy_records_to_table("profile", schema_name=schema, records=[
        (r["person_id"], r["bio"]) for p in world.people for r in profile_rows(p["id"])])
    await conn.copy_records_to_table("counter_v", schema_name=schema, records=[(1,), (2,)])
