"""A server with a name of its own (``--name``), through the wire: its functions, its
system views and system functions live in its own schemas, and work there as the
default name's do in ``fn`` and ``scratchpad``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import define_fn, define_resource
from glove_scratchpad.server import Database

from ..fix_server import dsn, serving

ROWS = [{"id": i, "label": f"label {i}"} for i in range(1, 601)]


@pytest.fixture
async def named(sidecar: Any) -> AsyncIterator[str]:
    calls = {"shelf": 0}

    def shelf(b: Any) -> list[dict[str, Any]]:
        calls["shelf"] += 1
        return ROWS

    resources = [define_resource("shelf", columns=[("id", "bigint"), ("label", "text")],
                                 primary_key=["id"], volatility="immutable", select=shelf,
                                 inline=True)]
    fns = [define_fn("add", handler=lambda args: {"sum": args["a"] + args["b"]},
                     description="Adds a and b.")]
    db = await Database.create(resources, fns=fns, writes=True, sidecar=sidecar,
                               database="test_named_server", name="shop")
    async with serving(db, writes=True) as server:
        yield dsn(server)
    await db.close()


async def test_a_named_servers_functions_views_and_system_functions(named):
    async with await psycopg.AsyncConnection.connect(named, autocommit=True) as conn:
        cur = await conn.execute("""SELECT shop_fn.add('{"a": 2, "b": 3}') AS r""")
        assert (await cur.fetchone())[0] == {"sum": 5}
        with pytest.raises(psycopg.errors.UndefinedFunction) as info:
            await conn.execute("SELECT shop_fn.nope()")
        assert "shop_fn" in (info.value.diag.message_hint or "")

        cur = await conn.execute("SELECT label FROM shelf WHERE id = 7")
        assert await cur.fetchall() == [("label 7",)]
        cur = await conn.execute("SELECT resource, rows FROM shop_scratchpad.cache")
        assert await cur.fetchall() == [("shelf", 600)]
        cur = await conn.execute("EXPLAIN SELECT label FROM shelf WHERE id = 8")
        plan = "\n".join(r[0] for r in await cur.fetchall())
        assert "SELECT shop_scratchpad.refresh('shelf') drops them" in plan
        cur = await conn.execute("SELECT shop_scratchpad.refresh('shelf')")
        assert await cur.fetchall() == [("dropped 1 kept call of shelf",)]

        with pytest.raises(psycopg.errors.InvalidParameterValue) as info:
            await conn.execute("SELECT shop_scratchpad.restage(424242)")
        assert "shop_scratchpad.journal" in (info.value.diag.message_hint or "")
