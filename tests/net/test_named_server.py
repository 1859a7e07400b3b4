"""A server with a name of its own (``--name``), through the wire: its functions, its
system views and system functions live in its own schemas, and work there as the
default name's do in ``fn`` and ``scratchpad``. Its audit is its own, and its
sessions may put its schemas on ``search_path``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import define_fn, define_resource
from glove_scratchpad.server import Database

from ..fix_server import dsn, serving

ROWS = [{"id": i, "label": f"label {i}"} for i in range(1, 601)]


DATABASE = "test_named_server"


def shelf() -> Any:
    return define_resource("shelf", columns=[("id", "bigint"), ("label", "text")],
                           primary_key=["id"], volatility="immutable", select=lambda b: ROWS,
                           inline=True)


@asynccontextmanager
async def server_named(sidecar: Any, name: str | None, database: str = DATABASE
                       ) -> AsyncIterator[str]:
    """A server called ``name`` (None: the default one) on ``database``, and its DSN."""
    fns = [define_fn("add", handler=lambda args: {"sum": args["a"] + args["b"]},
                     description="Adds a and b.")]
    db = await Database.create([shelf()], fns=fns, writes=True, sidecar=sidecar,
                               database=database, **({"name": name} if name else {}))
    try:
        async with serving(db, writes=True) as server:
            yield dsn(server)
    finally:
        await db.close()


@pytest.fixture
async def named(sidecar: Any) -> AsyncIterator[str]:
    async with server_named(sidecar, "shop") as url:
        yield url


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

        with pytest.raises(psycopg.errors.UndefinedTable) as info:
            await conn.execute("SELECT * FROM cache")  # a system view, unqualified
        assert info.value.diag.message_hint == (
            "shop_scratchpad.cache is a system view: name it with its schema.")


async def test_a_named_servers_audit_is_its_own(sidecar):
    # A database of its own: audits outlive their servers.
    async with (server_named(sidecar, "shop", "test_named_audit") as shop,
                server_named(sidecar, None, "test_named_audit") as glove,
                await psycopg.AsyncConnection.connect(shop, autocommit=True) as at_shop,
                await psycopg.AsyncConnection.connect(glove, autocommit=True) as at_glove):
        await at_shop.execute("SELECT label FROM shelf WHERE id = 1")
        await at_shop.execute("""SELECT shop_fn.add('{"a": 1, "b": 1}')""")
        cur = await at_shop.execute("SELECT resource FROM shop_scratchpad.calls ORDER BY 1")
        assert await cur.fetchall() == [("shelf",), ("shop_fn.add",)]
        # The same user on the default server of the same database sees none of them.
        cur = await at_glove.execute("SELECT count(*) FROM scratchpad.calls")
        assert await cur.fetchall() == [(0,)]


async def test_a_named_servers_schemas_may_be_on_search_path(named):
    async with await psycopg.AsyncConnection.connect(named, autocommit=True) as conn:
        await conn.execute("SET search_path = shop, shop_scratchpad, public")
        cur = await conn.execute("SELECT label FROM shelf WHERE id = 3")
        assert await cur.fetchall() == [("label 3",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
            await conn.execute("SET search_path = shop, scratchpad")
        assert "shop_scratchpad" in info.value.diag.message_primary
        assert "narrow" in (info.value.diag.message_hint or "")
