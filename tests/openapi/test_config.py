"""The config's other keys, over the wire against the tests' own API: tables assembled
by hand (a select with its paging declared, writes by "METHOD /path" and by
operationId, a table of one write), ``auto = false``, ``timeout``, ``rate``, and the
API's own 401."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import rows
from .api_app import ODD
from .fix_api import api_served, tables_of

HAND = [
    {"name": "odd", "select": "GET /odd/items", "rows": "rows",
     "paging": {"style": "cursor", "field": "continue_at", "size": "how_many"}},
    {"name": "thing", "select": "getThing", "update": "PATCH /things/{thing_id}",
     "delete": "deleteThing"},
    {"name": "maker", "insert": "POST /things"},
]



@pytest.fixture
async def api() -> Any:
    async with api_served() as api:
        yield api


async def test_tables_assembled_by_hand(api, sidecar):
    async with tables_of(api, sidecar, auto=False, tables=HAND) as t, \
            await t.connect() as conn:
        assert await rows(conn, "SELECT name FROM scratchpad.resources ORDER BY name") == [
            ("t_maker",), ("t_odd",), ("t_thing",)]  # auto = false: these alone
        # Paging by names no rule knows, declared: every page, by its relative next URL.
        assert await rows(conn, "SELECT count(*), sum(n) FROM t_odd") == [
            (ODD, ODD * (ODD + 1) // 2)]
        assert [q for _, p, q, _ in api.rec.requests if p == "/odd/items"] == [
            {"how_many": "100"}, {"start_at": "100", "how_many": "100"},
            {"start_at": "200", "how_many": "100"}]
        api.rec.requests.clear()
        assert await rows(conn, "SELECT n FROM t_odd LIMIT 3") == [(1,), (2,), (3,)]
        assert [q for _, p, q, _ in api.rec.requests] == [{"how_many": "3"}]
        # One operation each, by operationId or "METHOD /path".
        assert await rows(conn, "SELECT name FROM t_thing WHERE thing_id = 2") == [
            ("thing 2",)]
        await conn.execute("UPDATE t_thing SET name = 'two' WHERE thing_id = 2")
        await conn.execute("DELETE FROM t_thing WHERE thing_id = 3")
        [(made, name)] = await rows(conn, "INSERT INTO t_maker (name, kind) VALUES "
                                    "('kite', 'toy') RETURNING id, name")
    assert name == "kite" and api.rec.things[made].kind == "toy"
    assert api.rec.things[2].name == "two" and 3 not in api.rec.things
    writes = [(m, p) for m, p, _, _ in api.rec.requests if m != "GET"]
    assert writes == [("PATCH", "/things/2"), ("DELETE", "/things/3"), ("POST", "/things")]


async def test_a_timeout_is_an_error_that_names_it(api, sidecar):
    async with tables_of(api, sidecar, include=["slowItems"], timeout=0.2, retries=0) as t, \
            await t.connect() as conn:
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT * FROM t_slow_items")
    assert "the API did not answer within 0.2 s" in str(info.value)
    assert "raise timeout" in info.value.diag.message_hint


async def test_the_rate_spaces_the_requests(api, sidecar):
    # 1 request per 0.2 s: a read of 4 pages takes at least 0.6 s between the start of
    # its first request and of its last (a lower bound, whatever the machine's speed).
    # A request's row is written as it ends: its start is ``at`` less its latency (the
    # first one, which opens the connection, may well take the longest).
    async with tables_of(api, sidecar, include=["pageItems"], rate=[1, 0.2],
                         max_page_size=100) as t, await t.connect() as conn:
        got = await rows(conn, "SELECT n FROM t_page_items LIMIT 350")
        assert len(got) == 350
        at = await rows(conn, "SELECT extract(epoch FROM max(s) - min(s)), count(*) FROM "
                        "(SELECT at - latency_ms * interval '1 ms' AS s FROM scratchpad.calls"
                        " WHERE verb = 'http GET' AND statement LIKE '%LIMIT 350') AS r")
    [(spread, count)] = at
    assert count == 4 and spread >= 0.55, at


async def test_the_apis_own_401_names_the_credentials_entry(api, sidecar):
    async with tables_of(api, sidecar, include=["secureItems"], roles={},
                         headers={"Authorization": "Bearer not-a-token"}) as t, \
            await t.connect() as conn:
        with pytest.raises(psycopg.errors.InvalidAuthorizationSpecification) as info:
            await conn.execute("SELECT * FROM t_secure_items")
    assert info.value.diag.message_primary.endswith("the API refused the credentials (401)")
    assert info.value.diag.message_detail == "status 401; the API said: bad or missing token"
    assert "[[openapi.apis]] namespace = 't'" in info.value.diag.message_hint
    assert "not-a-token" not in str(info.value) + info.value.diag.message_hint


async def test_paging_stops_at_the_row_cap(api, sidecar):
    # 100 a page, 150 rows a call at most: the second page is the last one asked for.
    async with tables_of(api, sidecar, include=["linkItems"],
                         limits=Limits(call_row_cap=150)) as t, await t.connect() as conn:
        assert await rows(conn, "SELECT count(*) FROM t_link_items") == [(150,)]
        [(_, notice)] = conn.notices  # type: ignore[attr-defined]
    assert notice == 'resource "t_link_items" gave more than 150 rows in one call; the rest ' \
        "were cut"
    assert [q.get("after") for _, p, q, _ in api.rec.requests if p == "/link/items"] == [
        None, "100"]
