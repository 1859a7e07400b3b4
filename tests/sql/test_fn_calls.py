"""Finding and checking the calls of ``fn.<name>(…)`` (``sql/fn_calls.py``), through the
wire: arguments must be values, as a resource's pushed-down arguments are; one that reads
the statement's rows, an aggregate or a call in RETURNING is refused before anything is
called, with a HINT."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import define_fn
from glove_scratchpad.server import Database

from ..fix_server import dsn, serving
from ..net.fix_wire import wire_resources

CALLS: list[dict[str, Any]] = []


def _echo(args: dict[str, Any]) -> dict[str, Any]:
    CALLS.append(args)
    return args


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[str]:
    db = await Database.create(wire_resources(), writes=True, sidecar=sidecar,
                               database="test_sql_fn_calls",
                               fns=[define_fn("echo", handler=_echo, description="Echoes.")])
    async with serving(db, writes=True) as srv:
        yield dsn(srv)
    await db.close()


async def test_a_call_of_values_runs_once(served):
    CALLS.clear()
    async with await psycopg.AsyncConnection.connect(served, autocommit=True) as conn:
        cur = await conn.execute("SELECT fn.echo(jsonb_build_object('n', 1 + 1)), "
                                 "fn.echo(jsonb_build_object('n', 1 + 1))")
        assert await cur.fetchall() == [({"n": 2}, {"n": 2})]
    assert CALLS == [{"n": 2}]


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT fn.echo(jsonb_build_object('n', i.id)) FROM items i WHERE i.id = 1", "i.id"),
    ("SELECT fn.echo(jsonb_build_object('n', count(*))) FROM items",
     "an aggregate or window function over the statement's rows"),
])
async def test_an_argument_that_is_no_value_is_refused_before_any_call(served, sql, said):
    CALLS.clear()
    async with await psycopg.AsyncConnection.connect(served, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported) as info:
            await conn.execute(sql)
    assert said in (info.value.diag.message_primary or "")
    assert info.value.diag.message_hint
    assert CALLS == []
