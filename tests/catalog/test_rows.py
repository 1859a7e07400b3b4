"""Resolved rows on their way to the sidecar: column arrays, or JSON for other types."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad import errors
from glove_scratchpad.catalog import populate_sql, rows_params
from glove_scratchpad.resources import define_resource

ROWS: dict[str, list[dict[str, Any]]] = {}


class Item(BaseModel):
    k: int
    i: int | None = None
    name: str | None = None
    value: float | None = None
    ok: bool | None = None
    doc: dict[str, Any] | None = None
    price: float | None = Field(default=None, json_schema_extra={"pg_type": "numeric(6,2)"})


class Tagged(BaseModel):
    k: int
    code: str = Field(json_schema_extra={"pg_type": "varchar(3)"})
    tags: list[str] = Field(default=[], json_schema_extra={"pg_type": "text[]"})


def _resources() -> list[Any]:
    return [
        define_resource(
            "items", schema=Item, keys=["k"], volatility="volatile", select=lambda b: ROWS["items"]
        ),
        define_resource(
            "tagged",
            schema=Tagged,
            keys=["k"],
            volatility="volatile",
            select=lambda b: ROWS["tagged"],
        ),
    ]


def test_scalar_columns_travel_as_one_array_per_column():
    items, tagged = _resources()
    rows = items.validate_rows(
        [
            {"k": 1, "i": 2, "name": 'a "q" \\ b', "value": math.nan, "ok": True, "doc": {"x": 1}},
            {"k": 1, "value": -math.inf},
        ]
    )
    assert rows_params(items, rows) == [
        "{1,1}",
        "{2,null}",
        '{"a \\"q\\" \\\\ b",NULL}',
        '{"NaN","-Infinity"}',
        "{true,null}",
        '{"{\\"x\\":1}",NULL}',
        "{NULL,NULL}",
    ]
    assert "unnest($3::bigint[])::bigint" in populate_sql(items, 2)
    # An array column (and a length a cast would cut) go as one JSON parameter.
    assert len(rows_params(tagged, tagged.validate_rows([{"k": 1, "code": "a"}]))) == 1
    assert "json_populate_recordset" in populate_sql(tagged, 1)


async def test_many_rows_keep_their_values_and_types(make_db):
    db = await make_db(_resources())
    n = 1000  # several validation chunks
    ROWS["items"] = [
        {
            "k": 1,
            "i": i,
            "name": None if i % 7 == 0 else f'row {i} "q" \\ ,{{}}',
            "value": math.nan if i == 3 else i / 3,
            "ok": i % 2 == 0,
            "doc": {"i": i, "s": "é"} if i % 5 else None,
            "price": i / 100,
        }
        for i in range(n)
    ]
    r = await db.execute(
        "SELECT count(*), count(name), sum(i), count(*) FILTER (WHERE value = 'NaN'), "
        "sum(price), count(doc), pg_typeof(max(price))::text FROM items WHERE k = 1"
    )
    assert r.rows == [(n, n - 143, n * (n - 1) // 2, 1, pytest.approx(4995.0), 800, "numeric")]
    r = await db.execute(
        "SELECT i, name, value, ok, doc FROM items WHERE k = 1 AND i IN (3, 10) ORDER BY i"
    )
    assert r.rows[0][:2] == (3, 'row 3 "q" \\ ,{}') and math.isnan(r.rows[0][2])
    assert r.rows[1] == (10, 'row 10 "q" \\ ,{}', 10 / 3, True, None)


async def test_both_encodings_refuse_what_the_column_type_refuses(make_db):
    db = await make_db(_resources())
    ROWS["items"] = [{"k": 1, "price": 12345.678}]  # numeric(6,2): column arrays
    with pytest.raises(errors.SqlError) as info:
        await db.execute("SELECT * FROM items WHERE k = 1")
    assert info.value.sqlstate == "22003"
    ROWS["tagged"] = [{"k": 1, "code": "abcd", "tags": ["x"]}]  # varchar(3): JSON
    with pytest.raises(errors.SqlError) as info:
        await db.execute("SELECT * FROM tagged WHERE k = 1")
    assert info.value.sqlstate == "22001"
    ROWS["tagged"] = [{"k": 1, "code": "abc", "tags": ["x", "y,z"]}]
    r = await db.execute("SELECT code, tags FROM tagged WHERE k = 1")
    assert r.rows == [("abc", ["x", "y,z"])]


@pytest.mark.parametrize(("sql", "rescans"), [
    ("SELECT * FROM items WHERE k = 1", False),
    ("SELECT i.name FROM items i JOIN tagged t ON t.k = i.k WHERE i.k = 1 AND t.k = 1", False),
    ("SELECT (SELECT count(*) FROM items WHERE k = 1 AND i = t.k) FROM tagged t WHERE k = 1",
     True),
    ("SELECT * FROM tagged t, LATERAL (SELECT * FROM items WHERE k = 1 AND i = t.k) x"
     " WHERE t.k = 1", True),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n, items"
     " WHERE k = 1 AND x < i) SELECT * FROM n", True),
])
async def test_rows_read_many_times_are_materialized_once(sql, rescans):
    """Rows are inlined where they are read once; where a subquery, LATERAL or recursion
    may read them again, they are made once (MATERIALIZED), not parsed again per read."""
    from glove_scratchpad.server.engine.session import parse
    from glove_scratchpad.server.sql.analysis import analyze
    from glove_scratchpad.server.sql.rewrite import rewrite

    resources = {r.name: r for r in _resources()}
    [stmt] = parse(sql)
    plan = analyze(stmt.sql, stmt.node, lambda schema, name: resources.get(name))
    assert plan.rescans is rescans
    params = {ref.id: 10 * ref.id for ref in plan.reads}
    assert ("AS MATERIALIZED (" in rewrite(plan, params, populate=populate_sql).sql) is rescans
