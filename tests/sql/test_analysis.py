"""Pushdown on syntax trees alone: what binds a key, a filter, a feed and a LIMIT. No sidecar."""

from __future__ import annotations

import pytest
from pglast.stream import RawStream

from glove_scratchpad import errors
from glove_scratchpad.resources import define_resource
from glove_scratchpad.server.sql.analysis import analyze
from glove_scratchpad.server.sql.nodes import deparse
from glove_scratchpad.server.sql.parse import parse

_RESOURCES = {r.name: r for r in (
    define_resource("tasks", columns=[("id", "bigint"), ("title", "text"), ("status", "text")],
                    filters=["status"], volatility="volatile", select=lambda b: []),
    define_resource("web", columns=[("query", "text"), ("url", "text"), ("rank", "bigint")],
                    keys=["query"], filters=["rank"], volatility="volatile",
                    select=lambda b: []),
    define_resource("a", columns=[("k", "text"), ("x", "text")], keys=["k"],
                    volatility="volatile", select=lambda b: []),
    define_resource("b", columns=[("k", "text"), ("x", "text")], keys=["k"],
                    volatility="volatile", select=lambda b: []),
)}


def plan(sql: str):  # type: ignore[no-untyped-def]
    stmt = parse(sql)[0]
    return analyze(stmt.sql, stmt.node, lambda schema, name: _RESOURCES.get(name)
                   if schema in (None, "public") else None)


def web(sql: str):  # type: ignore[no-untyped-def]
    return next(r for r in plan(sql).references if r.name == "web")


@pytest.mark.parametrize(("where", "keys"), [
    ("query = 'x'", {"query": ["'x'"]}),
    ("'x' = query", {"query": ["'x'"]}),
    ("query IN ('x', 'y')", {"query": ["'x'", "'y'"]}),
    ("query = ANY($1)", {"query": ["$1"]}),
    ("query = lower($1) || 'x'", {"query": ["lower($1) || 'x'"]}),
    ("query = CASE $1::int WHEN 1 THEN 'a' ELSE 'b' END",
     {"query": ["CASE CAST($1 AS integer) WHEN 1 THEN 'a' ELSE 'b' END"]}),
    ("query LIKE 'x%'", {}),
    ("query <> 'x'", {}),
    ("(query = 'x' OR query = 'y')", {"query": ["'x'", "'y'"]}),  # an IN list
    ("((query = 'x' AND url = 'a') OR query IN ('y', 'z'))",
     {"query": ["'x'", "'y'", "'z'"]}),
    ("(query = 'x' OR url = 'y')", {}),  # a branch that binds no key
    ("url = 'x'", {}),  # not a key, not a filter: nothing reaches the tool
])
def test_what_binds_a_key(where, keys):
    ref = web(f"SELECT * FROM web WHERE {where}")
    assert {p.column: [v.sql for v in p.values] for p in ref.predicates} == keys


@pytest.mark.parametrize(("where", "conditions"), [
    ("rank = 1", [("rank", "=", ["1"])]),
    ("rank IN (1, 2)", [("rank", "in", ["1", "2"])]),
    ("rank BETWEEN 1 AND 3", [("rank", ">=", ["1"]), ("rank", "<=", ["3"])]),
    ("rank < 3", [("rank", "<", ["3"])]),
    ("3 > rank", [("rank", "<", ["3"])]),
    ("rank IS NULL", [("rank", "is null", [])]),
    ("rank IS NOT NULL", [("rank", "is not null", [])]),
    ("url LIKE 'x'", []),
])
def test_what_binds_a_filter(where, conditions):
    ref = web(f"SELECT * FROM web WHERE query = 'q' AND {where}")
    assert [(c.column, c.op, [v.sql for v in c.values]) for c in ref.conditions] == conditions


@pytest.mark.parametrize(("sql", "feed"), [
    ("SELECT * FROM tasks t JOIN web w ON w.query = t.title",
     "SELECT DISTINCT t.title FROM tasks AS t"),
    ("SELECT * FROM tasks t, web w WHERE w.query = t.title AND t.status = 'todo'",
     "SELECT DISTINCT t.title FROM tasks AS t WHERE (t.status = 'todo')"),
    ("SELECT * FROM tasks t LEFT JOIN web w ON w.query = t.title",
     "SELECT DISTINCT t.title FROM tasks AS t"),
    ("SELECT (SELECT url FROM web WHERE query = t.title LIMIT 1) FROM tasks t",
     "SELECT DISTINCT t.title FROM tasks AS t"),
    ("SELECT * FROM tasks t, LATERAL (SELECT * FROM web WHERE query = upper(t.title)) x",
     "SELECT DISTINCT upper(t.title) FROM tasks AS t"),
])
def test_a_join_feeds_a_key(sql, feed):
    [pred] = web(sql).predicates
    [value] = pred.values
    assert value.sql == feed and value.is_set


def test_a_cycle_of_feeds_is_an_error_naming_both():
    with pytest.raises(errors.MissingRequiredKey) as info:
        plan("SELECT * FROM a JOIN b ON a.k = b.x AND b.k = a.x")
    assert "feed each other" in info.value.message


@pytest.mark.parametrize(("sql", "limit", "keys_only"), [
    ("SELECT * FROM web WHERE query = 'x' LIMIT 3", "3", True),
    ("SELECT * FROM web WHERE query = 'x' AND rank > 1 LIMIT 3", "3", False),
    ("SELECT * FROM web WHERE query = 'x' AND url = 'u' LIMIT 3", None, False),
    ("SELECT * FROM web WHERE query = 'x' ORDER BY rank LIMIT 3", None, False),
    ("SELECT count(*) FROM web WHERE query = 'x' LIMIT 3", None, False),
    ("SELECT DISTINCT url FROM web WHERE query = 'x' LIMIT 3", None, False),
    ("SELECT * FROM web w JOIN tasks t ON t.title = w.url WHERE query = 'x' LIMIT 3",
     None, False),
])
def test_a_limit_reaches_a_reference_only_when_it_applies_to_it_alone(sql, limit, keys_only):
    ref = web(sql)
    assert (ref.limit.sql if ref.limit else None, ref.keys_only) == (limit, keys_only)


@pytest.mark.parametrize("literal", [
    "1", "-5", "9223372036854775807", "99999999999999999999", "1.5", "-1.5e10", ".5",
    "'x'", "''", "'it''s'", "E'a\\\\b'", "'a\\b'", "'é ✓'", "U&'d\\0061t'", "$$x'y$$",
    "'a\nb'", "true", "false", "NULL", "B'101'", "X'1F'"])
def test_a_constant_is_written_as_pglast_writes_it(literal):
    # The pushed-down constant's text (EXPLAIN, the NOTICEs) is written without pglast's
    # printer; it must be the printer's, character for character.
    node = parse(f"SELECT {literal}")[0].node.targetList[0].val
    assert deparse(node) == RawStream()(node)
