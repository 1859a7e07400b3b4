"""One user cannot starve another of the sidecar pool, through the wire.

``ann`` sends 16 statements that the sidecar holds up (the kept table they read is
locked, as a slow statement would hold its connection) on 16 connections: the pool has
16. ``bob``'s reads are still answered at once, in the transports' callbacks (a compiled
read) and by the full path (a text seen for the first time); ann's statements beyond
what the pool leaves her wait on her own account, and all are answered once the lock
goes. When bob and carol both wait too, the next connection given back goes to carol,
who holds none, ahead of bob, who waited first. The bound is the task's: 2 s, for a
read that takes milliseconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.auth import User, make_verifier
from glove_scratchpad.server.net.server import Server

from ..engine.fix_cache import Counts, database_name, resources
from ..fix_server import serving

PASSWORDS = {"ann": "ann-pw", "bob": "bob-pw", "carol": "carol-pw"}
LOOKUP = "SELECT id, label FROM big WHERE id = $1"  # reads big's kept table
ANSWERED_WITHIN = 2.0  # seconds: the acceptance bound, for reads of a few milliseconds
POOL = 16  # the pool's connections (``Pool``'s size)


@asynccontextmanager
async def _served(sidecar: Any, **limits: Any) -> AsyncIterator[tuple[Database, Server]]:
    db = await Database.create(resources(Counts()), sidecar=sidecar, database=database_name(),
                               limits=Limits(cache_min_rows=20, **limits))
    users = {name: User(password=make_verifier(pw)) for name, pw in PASSWORDS.items()}
    try:
        async with serving(db, users=users) as server:
            yield db, server
    finally:
        await db.close()


async def _connect(server: Server, user: str) -> asyncpg.Connection:
    return await asyncpg.connect(host="127.0.0.1", port=server.port, user=user,
                                 password=PASSWORDS[user], database="scratchpad")


async def _waiting_on_lock(admin: asyncpg.Connection) -> int:
    """The statements' connections waiting for the lock (not the kept table's ANALYZE,
    which the server runs as the sidecar's owner, as ``admin`` is)."""
    return int(await admin.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND usename <> current_user"))


async def _opened(admin: asyncpg.Connection, agent: str) -> int:
    """The statements' connections open in the sidecar database."""
    return int(await admin.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND usename = $1", agent))


@asynccontextmanager
async def _ann_holds_the_sidecar(db: Database, server: Server, outcomes: list[Any]
                                 ) -> AsyncIterator[tuple[asyncpg.Connection, int]]:
    """ann's 16 statements held up in the sidecar while the block runs; then each one's
    answer or error is in ``outcomes``. Gives the sidecar's admin connection and how many
    were let in."""
    clients = [await _connect(server, "ann") for _ in range(POOL)]
    admin = await asyncpg.connect(db.catalog.sidecar.dsn, database=db.catalog.database)
    try:
        lookups = [await c.prepare(LOOKUP) for c in clients]
        assert await lookups[0].fetch(1) == [(1, "label 1")]  # kept, and compiled
        bobs = [await _connect(server, "bob") for _ in range(4)]
        try:  # the pool's 16 connections opened (none starts while the table is locked)
            async with asyncio.timeout(10):
                while await _opened(admin, db.catalog.agent_user) < POOL:
                    await asyncio.gather(*(lookup.fetch(i) for i, lookup in enumerate(lookups)),
                                         *(bob.fetch(LOOKUP, i) for i, bob in enumerate(bobs)))
        finally:
            for bob in bobs:
                await bob.close()
        [(schema, table)] = await admin.fetch(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname LIKE '\\_gs\\_cache%'")
        async with admin.transaction():
            await admin.execute(f'LOCK TABLE "{schema}"."{table}" IN ACCESS EXCLUSIVE MODE')
            held = [asyncio.ensure_future(lookup.fetch(100 + i))
                    for i, lookup in enumerate(lookups)]
            async with asyncio.timeout(10):
                while await _waiting_on_lock(admin) < POOL // 2:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # the rest of them take what they can
            let_in = await _waiting_on_lock(admin)
            yield admin, let_in
        outcomes += await asyncio.wait_for(asyncio.gather(*held, return_exceptions=True), 10)
    finally:
        for c in (*clients, admin):
            await c.close()


async def _answered_at_once(conn: asyncpg.Connection, sql: str, *args: Any) -> list[Any]:
    started = time.monotonic()
    rows = await asyncio.wait_for(conn.fetch(sql, *args), ANSWERED_WITHIN)
    assert time.monotonic() - started < ANSWERED_WITHIN
    return rows


async def test_one_users_slow_statements_leave_another_users_reads_a_connection(sidecar):
    async with _served(sidecar) as (db, server):
        bob = await _connect(server, "bob")
        try:
            compiled = await bob.prepare("SELECT label FROM item WHERE id = $1")
            assert await compiled.fetch(1) == [("label 1",)]  # compiled for the fast path
            anns: list[Any] = []
            async with _ann_holds_the_sidecar(db, server, anns) as (admin, let_in):
                # ann may take the pool but the reserve: 2 of 16 wait on her account.
                assert let_in == POOL - Limits().sidecar_reserve
                started = time.monotonic()
                assert await asyncio.wait_for(compiled.fetch(2), ANSWERED_WITHIN) == [
                    ("label 2",)]
                assert await _answered_at_once(  # a new text: checked, called, run
                    bob, "SELECT count(*) AS n FROM item WHERE id = ANY($1::bigint[])",
                    [3, 4]) == [(2,)]
                assert time.monotonic() - started < ANSWERED_WITHIN
                assert await _waiting_on_lock(admin) == let_in  # ann got no more of it
            assert anns == [[(100 + i, f"label {100 + i}")] for i in range(POOL)]
        finally:
            await bob.close()


async def test_a_connection_given_back_goes_to_the_waiting_user_holding_the_fewest(sidecar):
    async with _served(sidecar) as (db, server):
        bobs = [await _connect(server, "bob") for _ in range(3)]
        carol = await _connect(server, "carol")
        try:
            bob_lookups = [await b.prepare(LOOKUP) for b in bobs]  # the locked table too
            carols = await carol.prepare("SELECT label FROM item WHERE id = $1")
            assert await carols.fetch(1) == [("label 1",)]  # compiled for the fast path
            anns: list[Any] = []
            async with _ann_holds_the_sidecar(db, server, anns) as (admin, _):
                bob_held = [asyncio.ensure_future(lookup.fetch(200 + i))
                            for i, lookup in enumerate(bob_lookups)]
                async with asyncio.timeout(10):  # bob took the 2 left: the pool is full
                    while await _waiting_on_lock(admin) < POOL:
                        await asyncio.sleep(0.05)
                await asyncio.sleep(0.3)  # bob's third waits for a connection
                carol_read = asyncio.ensure_future(carols.fetch(2))
                await asyncio.sleep(0.3)
                assert not carol_read.done()  # carol waits too, after bob
                # A statement in the sidecar is canceled (ann's or bob's): its connection
                # is given back, to carol (none held) ahead of bob (one or two held) and
                # of ann (over her share).
                assert await admin.fetchval(
                    "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE "
                    "wait_event_type = 'Lock' AND usename <> current_user LIMIT 1") is True
                assert await asyncio.wait_for(carol_read, ANSWERED_WITHIN) == [("label 2",)]
            bobs_ = await asyncio.wait_for(asyncio.gather(*bob_held, return_exceptions=True),
                                           10)
            answered = [o for o in anns + bobs_ if isinstance(o, list)]
            assert len(answered) == POOL + 2
            assert [type(o) for o in anns + bobs_ if not isinstance(o, list)] == [
                asyncpg.QueryCanceledError]
        finally:
            for c in (*bobs, carol):
                await c.close()
