"""What a session may do by its role's policy (``engine/policy.py``), through the wire: a
resource the role may not see does not exist for it, its row limit cuts a result with a
NOTICE, and a role that may not write gets 25006."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import serving
from ..net.fix_wire import wire_resources


@pytest.fixture(scope="module")
async def bob(sidecar: Any) -> AsyncIterator[str]:
    """A server where bob sees all but ``slow``, reads 2 rows at most and may not write."""
    db = await Database.create(demo_resources() + wire_resources(), writes=True,
                               sidecar=sidecar, database="test_engine_policy")
    users = {"bob": User(password=make_verifier("pw"), deny=["slow"], row_limit=2)}
    async with serving(db, users=users) as srv:
        yield f"postgresql://bob:pw@127.0.0.1:{srv.port}/scratchpad?sslmode=disable"
    await db.close()


async def test_a_denied_resource_does_not_exist_for_the_role(bob):
    async with await psycopg.AsyncConnection.connect(bob, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT * FROM slow WHERE seconds = 0")
        cur = await conn.execute("SELECT count(*) FROM information_schema.tables "
                                 "WHERE table_name IN ('slow', 'items')")
        assert await cur.fetchone() == (1,)


async def test_the_roles_row_limit_cuts_with_a_notice(bob):
    async with await psycopg.AsyncConnection.connect(bob, autocommit=True) as conn:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        cur = await conn.execute("SELECT id FROM items ORDER BY id")
        assert await cur.fetchall() == [(1,), (2,)]
        assert notices == ["result truncated to 2 rows (the row limit)"]


async def test_a_role_that_may_not_write_gets_25006(bob):
    async with await psycopg.AsyncConnection.connect(bob, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            await conn.execute("INSERT INTO tasks (title) VALUES ('no')")
