"""One table of scenarios, each run in process and over the wire, with one expectation.

A scenario is a list of steps on one session. A step names what it checks (the
tag, the columns, the rows, the notices, the error, the calls it made); what it
names is compared, the rest is not. Notices are always compared: a step that
names none expects none. A behaviour that works through ``Database.execute``
but not through the wire (or the other way round) fails here as one of the two
ids ``[…-in_process]`` / ``[…-wire]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from glove_scratchpad.resources.demo import demo_resources

from ..clients.fix_clients import (
    MISSING_KEY_HINT,
    MISSING_KEY_MESSAGE,
    MISSING_KEY_STATE,
    STAGED_HINT,
    WEB_ROWS,
    WEB_SQL,
)
from ..net.fix_wire import wire_resources
from .conftest import World
from .fix_ways import Failed, Way

# -- matchers: compare equal to any value they accept ---------------------------------


class Matches:
    def __init__(self, description: str, accept: Callable[[Any], bool]) -> None:
        self.description, self.accept = description, accept

    def __eq__(self, other: object) -> bool:
        return self.accept(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{self.description}>"


def like(pattern: str) -> Matches:
    """A string matching the regular expression (whole)."""
    return Matches(f"like {pattern!r}",
                   lambda v: isinstance(v, str) and re.fullmatch(pattern, v) is not None)


def has(text: str) -> Matches:
    return Matches(f"has {text!r}", lambda v: isinstance(v, str) and text in v)


def plan_of(resource: str) -> Matches:
    """EXPLAIN's rows: one text column, the resource's line first, then Postgres' plan."""
    def accept(rows: Any) -> bool:
        return (isinstance(rows, list) and len(rows) > 1
                and all(isinstance(r, tuple) and len(r) == 1 and isinstance(r[0], str)
                        for r in rows)
                and rows[0][0].startswith(f"Resource {resource} "))
    return Matches(f"a plan whose first line is Resource {resource}, then Postgres' plan",
                   accept)


# -- the table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    sql: str
    params: tuple[Any, ...] = ()
    tag: Any = None
    columns: list[str] | None = None
    rows: Any = None
    notices: list[tuple[str, Any, Any]] = field(default_factory=list)
    error: tuple[str, Any, Any] | None = None  # (sqlstate, message, hint)
    calls: dict[str, int] = field(default_factory=dict)  # "search", "notes.insert", "fn.add"


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]


def staged(i: int, resource: str = "notes", rows: int = 1) -> tuple[str, str, str]:
    s = "" if rows == 1 else "s"
    return ("NOTICE", f"staged #{i}: {resource}.insert({rows} row{s}) will be called at COMMIT",
            STAGED_HINT)


TABLES = sorted([*(r.name for r in [*demo_resources(), *wire_resources()]),
                 "github_pr", "notes", "search"])
WEB_COLUMNS = [("query", "text", "NO"), ("title", "text", "NO"), ("url", "text", "NO"),
               ("snippet", "text", "NO"), ("rank", "bigint", "NO")]
NO_ROWS_HINT = "Re-check the filter values against the column descriptions (\\d+ web)."
TITEL_HINT = 'Perhaps you meant to reference the column "tasks.title".'

SCENARIOS = [
    Scenario("discovery", (
        Step("SELECT table_name FROM information_schema.tables "
             "WHERE table_schema = 'glove' ORDER BY table_name",
             tag=f"SELECT {len(TABLES)}", columns=["table_name"],
             rows=[(t,) for t in TABLES]),
        Step("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
             "WHERE table_schema = 'glove' AND table_name = 'web' ORDER BY ordinal_position",
             tag="SELECT 5", columns=["column_name", "data_type", "is_nullable"],
             rows=WEB_COLUMNS),
        Step("SELECT col_description('glove.web'::regclass, 1) AS d",
             rows=[("Required key. Search terms (required): words to look for",)]),
        Step("SELECT name, verbs, volatility, keys, primary_key FROM scratchpad.resources "
             "WHERE name IN ('web', 'notes', 'items') ORDER BY name",
             tag="SELECT 3", columns=["name", "verbs", "volatility", "keys", "primary_key"],
             rows=[("items", "select", "immutable", "", "id"),
                   ("notes", "select, insert, update, delete", "volatile", "", "id"),
                   ("web", "select", "volatile", "query", "")]),
    )),
    Scenario("call_with_a_key", (
        Step(WEB_SQL, tag="SELECT 2", columns=["title", "rank"], rows=WEB_ROWS),
        Step("SELECT title, rank FROM web WHERE query = %s ORDER BY rank", ("postgresql",),
             tag="SELECT 2", rows=WEB_ROWS),
        Step("SELECT name FROM items WHERE id = %s", (7,), tag="SELECT 1", rows=[("item 7",)]),
        Step("SELECT title FROM search WHERE query = 'x' ORDER BY title", tag="SELECT 2",
             rows=[("x result 1",), ("x result 2",)], calls={"search": 1}),
    )),
    Scenario("missing_key", (
        Step("SELECT * FROM web",
             error=(MISSING_KEY_STATE, MISSING_KEY_MESSAGE, MISSING_KEY_HINT)),
        Step("SELECT title FROM search WHERE title = 'x'",
             error=("22023", has('required key "query"'), has("WHERE query = ")),
             calls={"search": 0}),
    )),
    Scenario("exactly_once", (
        # one call per distinct (resource, arguments) in a statement, however often it is named
        Step("SELECT (SELECT count(*) FROM search WHERE query = 'a') "
             "+ (SELECT count(*) FROM search s WHERE s.query = 'a') AS n",
             rows=[(4,)], calls={"search": 1}),
        Step("SELECT count(*) FROM search WHERE query IN ('a', 'b')",
             rows=[(4,)], calls={"search": 2}),
        Step("SELECT count(*) FROM github_pr a JOIN github_pr b ON a.number = b.number",
             rows=[(3,)], calls={"github_pr": 1}),
        # volatile: the next statement calls again
        Step("SELECT count(*) FROM search WHERE query = 'a'", rows=[(2,)], calls={"search": 1}),
    )),
    Scenario("staging", (
        Step("BEGIN", tag="BEGIN"),
        Step("INSERT INTO notes (title) VALUES ('draft')", tag="INSERT 0 1",
             notices=[staged(1)], calls={"notes.insert": 0}),
        Step("SELECT id, resource, verb, statement, calls, status FROM scratchpad.staged",
             tag="SELECT 1",
             rows=[(1, "notes", "insert", "INSERT INTO notes (title) VALUES ('draft')",
                    "notes.insert(1 row)", "staged")]),
        Step("ROLLBACK", tag="ROLLBACK", notices=[("NOTICE", "discarded 1 staged write", None)],
             calls={"notes.insert": 0}),
        Step("SELECT count(*) FROM scratchpad.staged", rows=[(0,)]),
    )),
    Scenario("staging_then_commit", (
        Step("BEGIN", tag="BEGIN"),
        Step("INSERT INTO notes (title) VALUES ('c1')", notices=[staged(1)]),
        Step("INSERT INTO notes (title) VALUES ('c2'), ('c3')", tag="INSERT 0 2",
             notices=[staged(2, rows=2)]),
        Step("COMMIT", tag="COMMIT",
             notices=[("NOTICE", "fired #1: notes.insert(1 row)", None),
                      ("NOTICE", "fired #2: notes.insert(2 rows)", None)],
             calls={"notes.insert": 2}),
    )),
    Scenario("explain", (
        Step("EXPLAIN SELECT rank FROM web WHERE query = 'postgres'", tag="EXPLAIN",
             columns=["QUERY PLAN"], rows=plan_of("web")),
        Step("EXPLAIN SELECT title FROM search WHERE query = 'x'", tag="EXPLAIN",
             rows=plan_of("search"), calls={"search": 0}),
    )),
    Scenario("error_with_a_hint", (
        Step("SELECT titel FROM tasks",
             error=("42703", 'column "titel" does not exist', TITEL_HINT)),
        Step("SELECT count(*) FROM tasks", rows=[(3,)]),  # the session goes on
    )),
    Scenario("error_in_a_transaction", (
        Step("BEGIN", tag="BEGIN"),
        Step("SELECT titel FROM tasks",
             error=("42703", 'column "titel" does not exist', TITEL_HINT)),
        Step("SELECT 1", error=("25P02", has("current transaction is aborted"), has("ROLLBACK"))),
        Step("ROLLBACK", tag="ROLLBACK"),
        Step("SELECT 1 AS one", rows=[(1,)]),
    )),
    Scenario("no_rows_notice", (
        Step("SELECT title FROM web WHERE query = 'zzqqxx'", tag="SELECT 0", columns=["title"],
             rows=[], notices=[("NOTICE", "resource \"web\" returned no rows for query = 'zzqqxx'",
                                NO_ROWS_HINT)]),
    )),
    Scenario("write_in_autocommit", (
        Step("INSERT INTO notes (title) VALUES ('now') RETURNING title", tag="INSERT 0 1",
             columns=["title"], rows=[("now",)], calls={"notes.insert": 1}),
        Step("SELECT count(*) FROM scratchpad.staged", rows=[(0,)]),
        Step("INSERT INTO web (query, title, url, snippet, rank) VALUES ('a', 'b', 'c', 'd', 1)",
             error=("42809", 'resource "web" cannot be inserted into: it supports SELECT',
                    has("SELECT"))),
        Step("DROP TABLE web", error=("42501", has("DROP TABLE is not allowed"),
                                      has("information_schema.tables"))),
    )),
    Scenario("fn_call", (
        Step("SELECT fn.add(a => 2, b => 3) AS r, fn.add(a => 2, b => 3) ->> 'sum' AS s",
             tag="SELECT 1", columns=["r", "s"], rows=[({"sum": 5}, "5")],
             calls={"fn.add": 1}),
        Step("SELECT fn.nope()", error=("42883", "function fn.nope() does not exist",
                                        has("\\df fn.*"))),
    )),
]


async def _run(way: Way, step: Step, world: World) -> dict[str, Any]:
    world.reset()
    try:
        got = await way.execute(step.sql, step.params)
        outcome: dict[str, Any] = {"tag": got.tag, "columns": got.columns, "rows": got.rows,
                                   "notices": got.notices, "error": None}
    except Failed as e:
        outcome = {"tag": None, "columns": None, "rows": None, "notices": e.notices,
                   "error": e.error}
    for name in step.calls:
        outcome[name] = world.calls(name)
    return outcome


def _expected(step: Step) -> dict[str, Any]:
    want: dict[str, Any] = {"notices": step.notices, "error": step.error, **step.calls}
    if step.error is None:
        want.update({k: v for k, v in (("tag", step.tag), ("columns", step.columns),
                                       ("rows", step.rows)) if v is not None})
    return want


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
async def test_scenario(scenario: Scenario, way: Way, world: World) -> None:
    for i, step in enumerate(scenario.steps):
        want = _expected(step)
        got = await _run(way, step, world)
        got = {k: got[k] for k in want}
        assert got == want, f"{way.name}, step {i}: {step.sql}"
