"""Connection slots: connections that never sign in cannot keep out those that do, and
the last sessions are kept for admins."""

from __future__ import annotations

import asyncio
import contextlib
import time

import asyncpg
import pytest

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import serving

IDLE = 1000  # connections that send nothing, as an attacker opens them
SIGN_IN_WITHIN = 5.0  # seconds a configured user may take to sign in meanwhile


@pytest.fixture
async def users_db(sidecar):
    db = await Database.create(demo_resources(), sidecar=sidecar, database="test_slots")
    yield db
    await db.close()


USERS = {"ann": User(password=make_verifier("s3cret")),
         "root": User(password=make_verifier("toor"), admin=True)}


def _dsn(port: int, user: str, password: str) -> str:
    return f"postgresql://{user}:{password}@127.0.0.1:{port}/scratchpad"


async def _idle(port: int, source: str) -> asyncio.StreamWriter | None:
    """A connection that sends nothing, from ``source`` (any address of 127/8 is this
    machine's); None when the server refused it at once."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    except OSError:
        return None
    return writer


async def test_idle_connections_that_never_sign_in_keep_no_user_out(users_db):
    async with serving(users_db, users=USERS) as srv:
        # From one address and from a hundred: the per-address limit refuses the first
        # kind, the oldest of the other kind make room for those that sign in.
        sources = ["127.0.0.2"] * (IDLE // 2) + [f"127.0.1.{i % 100 + 1}"
                                                 for i in range(IDLE // 2)]
        writers = await asyncio.gather(*(_idle(srv.port, s) for s in sources))
        try:
            await asyncio.sleep(0.2)  # every one accepted (or refused) by now
            started = time.monotonic()
            conn = await asyncpg.connect(_dsn(srv.port, "ann", "s3cret"),
                                         timeout=SIGN_IN_WITHIN)
            try:
                assert await conn.fetchval("SELECT 1") == 1
            finally:
                await conn.close()
            assert time.monotonic() - started < SIGN_IN_WITHIN
        finally:
            for w in writers:
                if w is not None:
                    w.close()


async def test_one_address_gets_only_its_start_up_slots(users_db):
    async with serving(users_db, users=USERS, max_startup_per_address=3) as srv:
        writers = [await _idle(srv.port, "127.0.0.3") for _ in range(3)]
        try:
            # The fourth from that address is refused at once, before it sends anything.
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port,
                                                           local_addr=("127.0.0.3", 0))
            refusal = await asyncio.wait_for(reader.read(), SIGN_IN_WITHIN)
            writer.close()
            assert refusal[:1] == b"E" and b"C53300\x00" in refusal
            assert b"too many connections starting up from 127.0.0.3" in refusal
            # Another address is not held back by it.
            conn = await asyncpg.connect(_dsn(srv.port, "ann", "s3cret"))
            await conn.close()
        finally:
            for w in writers:
                if w is not None:
                    w.close()


async def test_the_last_sessions_are_kept_for_admins(users_db):
    async with serving(users_db, users=USERS, max_connections=3,
                       reserved_connections=1) as srv:
        held = [await asyncpg.connect(_dsn(srv.port, "ann", "s3cret")) for _ in range(2)]
        try:
            with pytest.raises(asyncpg.TooManyConnectionsError,
                               match="reserved for admins"):
                await asyncpg.connect(_dsn(srv.port, "ann", "s3cret"))
            admin = await asyncpg.connect(_dsn(srv.port, "root", "toor"))
            with pytest.raises(asyncpg.TooManyConnectionsError, match="too many clients"):
                await asyncpg.connect(_dsn(srv.port, "root", "toor"))
            await admin.close()
            await held.pop().close()
            # A slot given back is free again.
            conn = await asyncpg.connect(_dsn(srv.port, "ann", "s3cret"))
            await conn.close()
        finally:
            for c in held:
                with contextlib.suppress(Exception):
                    await c.close()
