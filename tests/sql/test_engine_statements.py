"""The statements the engine sends the sidecar of its own making
(``server/sql/engine_statements.py``): each parses, names are quoted, and a write's
RETURNING list is the client's own. No sidecar; the wire's tests run them."""

from __future__ import annotations

import pytest

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server.sql import engine_statements as made
from glove_scratchpad.server.sql.analysis import analyze
from glove_scratchpad.server.sql.parse import parse

NOTES = define_resource("notes", columns=[("id", "bigint"), ("title", "text")],
                        primary_key=["id"], volatility="volatile", select=lambda b: [],
                        update=lambda rows, b: rows)


@pytest.mark.parametrize(("is_set", "has_subquery", "sql"), [
    (False, False, "SELECT ($1 + 1)::bigint"),
    (True, False, "SELECT (_gs_v)::bigint FROM unnest(($1 + 1)::bigint[]) AS _gs_s(_gs_v)"),
    (True, True, "SELECT (_gs_v)::bigint FROM (SELECT $1 + 1) AS _gs_s(_gs_v)"),
])
def test_a_value_is_read_as_its_columns_type(is_set, has_subquery, sql):
    expr = "SELECT $1 + 1" if has_subquery else "$1 + 1"  # a subquery's value is its SELECT
    assert made.value_select(expr, "bigint", is_set=is_set,
                             has_subquery=has_subquery) == sql
    parse(sql)


def test_names_are_quoted():
    assert made.fill_table("Odd Name", "s", "(VALUES (1)) v") == (
        'INSERT INTO "s"."Odd Name" SELECT * FROM (VALUES (1)) v')
    assert made.returning_alias("n") == 'RETURNING "n".*'
    assert made.returning_alias('a"b') == 'RETURNING "a""b".*'


def test_returning_is_the_clients_list_over_the_rows():
    [stmt] = parse("UPDATE notes SET title = 'x' WHERE id = 1 RETURNING id, upper(title)")
    plan = analyze(stmt.sql, stmt.node, lambda schema, name: NOTES)
    sql = made.returning_over(plan, "(VALUES (1, 'x')) AS notes(id, title)")
    assert sql == "SELECT  id, upper(title) FROM (VALUES (1, 'x')) AS notes(id, title)"
    parse(sql)
