"""Exactly once: random compositions never call a volatile resource twice per arguments.

Every composition is also run against a real table holding the same rows, so
pushdown never changes an answer.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_scratchpad.resources import Bindings, define_resource

ROWS = [{"k": k, "n": k * 10} for k in (1, 2, 3)]


def counter_resource(calls: Counter):
    def select(b: Bindings) -> list[dict]:
        calls[repr(sorted(b.as_dict().items()))] += 1
        if b.has("k"):
            return [r for r in ROWS if r["k"] in b.all("k")]
        return list(ROWS)

    return define_resource("counter", columns=[("k", "bigint"), ("n", "bigint")],
                           volatility="volatile", select=select)


def base() -> st.SearchStrategy[str]:
    return st.one_of(
        st.just("SELECT n FROM counter"),
        st.integers(1, 4).map(lambda k: f"SELECT n FROM counter WHERE k = {k}"),
        st.just("SELECT n FROM counter WHERE k IN (1, 3)"),
    )


def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(inner, inner, st.integers(0, 999))
    one = st.tuples(inner, st.integers(0, 999))
    return st.one_of(
        one.map(lambda q: f"SELECT n FROM ({q[0]}) AS s{q[1]}"),
        one.map(lambda q: f"WITH c{q[1]} AS ({q[0]}) SELECT n FROM c{q[1]}"),
        pair.map(lambda q: f"SELECT n FROM (({q[0]}) UNION ALL ({q[1]})) AS u{q[2]}"),
        pair.map(lambda q: f"SELECT n FROM (({q[0]}) UNION ({q[1]})) AS u{q[2]}"),
        one.map(lambda q: f"SELECT n FROM counter WHERE EXISTS ({q[0]})"),
        one.map(lambda q: f"SELECT n FROM counter o{q[1]} WHERE n >= "
                          f"(SELECT coalesce(min(n), 0) FROM ({q[0]}) AS i{q[1]} "
                          f"WHERE i{q[1]}.n >= o{q[1]}.n)"),
        one.map(lambda q: f"SELECT n FROM counter WHERE k IN "
                          f"(SELECT n / 10 FROM ({q[0]}) AS x{q[1]})"),
        one.map(lambda q: f"SELECT n FROM counter WHERE k = "
                          f"(SELECT min(n) / 10 FROM ({q[0]}) AS m{q[1]})"),
        one.map(lambda q: f"SELECT a{q[1]}.n FROM ({q[0]}) AS a{q[1]} "
                          f"JOIN counter b{q[1]} ON b{q[1]}.n = a{q[1]}.n"),
        one.map(lambda q: f"SELECT (SELECT count(*) FROM counter c{q[1]} "
                          f"WHERE c{q[1]}.n <= o.n) AS n FROM ({q[0]}) AS o"),
    )


statements = st.recursive(base(), extend, max_leaves=6)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sql=statements)
async def test_volatile_called_at_most_once_per_arguments(make_db_once, sql):
    db, calls, oracle = make_db_once
    calls.clear()
    result = await db.execute(sql)
    assert all(n == 1 for n in calls.values()), (sql, calls)
    expected = await oracle.fetch(sql)
    assert sorted(result.rows) == sorted(tuple(r) for r in expected), sql


import asyncpg  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(scope="module")
async def make_db_once(sidecar):
    from glove_scratchpad.server import Database

    calls: Counter = Counter()
    db = await Database.create([counter_resource(calls)], sidecar=sidecar,
                               database="test_exactly_once")
    oracle = await asyncpg.connect(host=sidecar.host, port=sidecar.port, user=sidecar.user,
                                   database="test_exactly_once")
    await oracle.execute("DROP SCHEMA IF EXISTS oracle CASCADE; CREATE SCHEMA oracle; "
                         "CREATE TABLE oracle.counter (k bigint, n bigint); "
                         "INSERT INTO oracle.counter VALUES (1, 10), (2, 20), (3, 30); "
                         "SET search_path = oracle")
    yield db, calls, oracle
    await oracle.close()
    await db.close()
