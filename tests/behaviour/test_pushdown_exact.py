"""The tool is given exactly the conditions the statement wrote, and the answer is
Postgres's: each cause the differential check found, one test each, in process and
over the wire (``tests/differential`` keeps looking for the next).

The expected answers are computed from the world's own rows in Python, as the
reference tables hold them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from ..differential.world import World
from ..scenarios.fix_ways import WAYS, Failed, Way, way_into


@pytest.fixture(params=WAYS)
async def world(request: Any, sidecar: Any) -> AsyncIterator[tuple[World, Way]]:
    w = World(3)
    async with way_into(request.param, sidecar, w.resources()) as way:
        yield w, way


async def count(way: Way, sql: str, params: tuple[Any, ...] = ()) -> int:
    out = await way.execute(sql, params)
    return int(out.rows[0][0])


async def tool_arguments(way: Way, resource: str) -> Any:
    """The arguments of the last call of ``resource``, as the audit recorded them."""
    out = await way.execute("SELECT arguments FROM scratchpad.calls WHERE resource = %s "
                            "ORDER BY at DESC LIMIT 1", (resource,))
    return out.rows[0][0]


async def test_every_call_keeps_its_rows_duplicates_included(world):
    w, way = world
    scores = w.rows["scores"]
    # Two people, at least one with a duplicate row: every row counts.
    ids = next((a, b) for a in range(1, 61) for b in range(a + 1, 61)
               if len([s for s in scores if s["person_id"] in (a, b)])
               > len({tuple(s.values()) for s in scores if s["person_id"] in (a, b)}))
    want = len([s for s in scores if s["person_id"] in ids])
    assert await count(way, "SELECT count(*) FROM scores WHERE person_id IN (%s, %s)",
                       ids) == want


async def test_a_fractional_constant_on_an_integer_filter_is_not_rounded(world):
    w, way = world
    ages = [p["age"] for p in w.rows["people"]]
    assert await count(way, "SELECT count(*) FROM people WHERE age <> 33.5") == len(
        [a for a in ages if a is not None])
    assert await tool_arguments(way, "people") == {"age is not null": None}
    assert await count(way, "SELECT count(*) FROM people WHERE age > 33.5 AND age < 35") \
        == ages.count(34)
    assert await tool_arguments(way, "people") == {"age >=": 34, "age <": 35}
    # A parameter of a float type, as psycopg sends 39.5.
    assert await count(way, "SELECT count(*) FROM people WHERE age > %s", (39.5,)) == len(
        [a for a in ages if a is not None and a > 39.5])
    # With a LIMIT the tool applies: every row it gives meets the condition written.
    out = await way.execute("SELECT age FROM people WHERE age >= 33.5 LIMIT 40")
    assert len(out.rows) == min(40, len([a for a in ages if a is not None and a >= 34]))
    assert await count(way, "SELECT count(*) FROM people WHERE age = 33.5") == 0


async def test_a_number_out_of_an_integer_columns_range_is_compared_not_cast(world):
    w, way = world
    known = len([p for p in w.rows["people"] if p["age"] is not None])
    assert await count(way, "SELECT count(*) FROM people WHERE age < 1e20") == known
    assert await count(way, "SELECT count(*) FROM people WHERE age > 1e20") == 0
    assert await count(way, "SELECT count(*) FROM scores WHERE person_id = "
                       "9223372036854775808") == 0


async def test_is_null_on_the_nullable_side_of_an_outer_join_is_not_pushed(world):
    w, way = world
    # people applies its filters: told "city is null", it would return only those, and
    # the orders of everyone else would pass the anti-join NULL-extended.
    people = {p["id"]: p for p in w.rows["people"]}
    want = len([o for o in w.rows["orders"]
                if o["person_id"] not in people or people[o["person_id"]]["city"] is None])
    assert await count(way, "SELECT count(*) FROM orders o LEFT JOIN people p ON "
                       "p.id = o.person_id WHERE p.city IS NULL") == want
    assert await tool_arguments(way, "people") == {}


async def test_a_ctes_own_name_is_the_resource_inside_its_body(world):
    w, way = world
    churn = len([t for t in w.rows["tags"] if t["tag"] == "churn"])
    assert churn
    assert await count(way, "WITH tags AS (SELECT * FROM tags WHERE tag = 'churn') "
                       "SELECT count(*) FROM tags") == churn
    with pytest.raises(Failed) as info:
        await way.execute("WITH scores AS (SELECT * FROM scores) SELECT count(*) FROM scores")
    assert info.value.error[0] == "22023"
    assert 'required key "person_id"' in info.value.error[1]


async def test_a_bare_timestamp_is_read_in_the_sessions_time_zone(world):
    w, way = world
    await way.execute("SET TimeZone = 'America/Sao_Paulo'")
    zone = ZoneInfo("America/Sao_Paulo")
    low = dt.datetime(2024, 12, 31, tzinfo=zone)
    high = dt.datetime(2025, 1, 1, tzinfo=zone)
    want = len([p for p in w.rows["people"] if p["seen"] and low <= p["seen"] <= high])
    assert await count(way, "SELECT count(*) FROM people WHERE seen BETWEEN '2024-12-31' "
                       "AND '2025-01-01'") == want
    await way.execute("SET TimeZone = 'Pacific/Auckland'")  # the same text, another zone
    zone = ZoneInfo("Pacific/Auckland")
    low, high = (dt.datetime(2024, 12, 31, tzinfo=zone), dt.datetime(2025, 1, 1, tzinfo=zone))
    want = len([p for p in w.rows["people"] if p["seen"] and low <= p["seen"] <= high])
    assert await count(way, "SELECT count(*) FROM people WHERE seen BETWEEN '2024-12-31' "
                       "AND '2025-01-01'") == want


async def test_a_date_is_read_under_the_sessions_datestyle(world):
    w, way = world
    day = next(p["joined"] for p in w.rows["people"] if p["joined"].day > 12)
    await way.execute("SET DateStyle = 'ISO, DMY'")
    want = len([p for p in w.rows["people"] if p["joined"] == day])
    assert await count(way, f"SELECT count(*) FROM people WHERE joined = "
                       f"'{day:%d/%m/%Y}'") == want


async def test_an_in_list_filter_of_a_resource_read_twice(world):
    w, way = world
    people = w.rows["people"]
    want = len([p for p in people if p["city"] in ("oslo", "rome")])
    assert await count(way, "SELECT count(*) FROM people a JOIN people b ON b.id = a.id "
                       "WHERE a.city IN ('oslo', 'rome') AND b.city IN ('oslo', 'rome', 'lima')"
                       ) == want


@pytest.mark.parametrize("source", ["unnest(ARRAY[4, 9, 4]) u", "generate_series(4, 9) u",
                                    "(VALUES (4), (9)) v(u)"])
async def test_a_key_fed_by_a_function_or_values_in_from(world, source):
    w, way = world
    fed = {"unnest": [4, 9, 4], "generate_series": list(range(4, 10)), "(VALUES": [4, 9]}
    ids = next(v for k, v in fed.items() if source.startswith(k))
    want = sum(len([s for s in w.rows["scores"] if s["person_id"] == i]) for i in ids)
    assert await count(way, f"SELECT count(*) FROM {source} JOIN scores s ON "
                       "s.person_id = u") == want


async def test_an_or_whose_every_branch_binds_the_key_is_its_in_list(world):
    w, way = world
    scores = w.rows["scores"]
    assert await count(way, "SELECT count(*) FROM scores WHERE person_id = 5 OR "
                       "person_id = 6") == len([s for s in scores if s["person_id"] in (5, 6)])
    want = len([s for s in scores if (s["person_id"] == 5 and s["subject"] == "art")
                or (s["person_id"] == 6 and (s["points"] or 0) > 40)])
    assert await count(way, "SELECT count(*) FROM scores WHERE (person_id = 5 AND subject = "
                       "'art') OR (person_id = 6 AND points > 40)") == want
