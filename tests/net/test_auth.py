"""Authentication (``net/auth.py``), through the wire: with users configured, each signs in
with SCRAM-SHA-256 against its verifier, and a wrong password and an unknown user fail the
same way (28P01), so that the answer does not tell which names exist."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.server import Database
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import serving
from .fix_wire import wire_resources


@pytest.fixture(scope="module")
async def signed(sidecar: Any) -> AsyncIterator[Any]:
    db = await Database.create(wire_resources(), sidecar=sidecar, database="test_net_auth")
    users = {"ann": User(password=make_verifier("s3cret"))}
    async with serving(db, users=users) as srv:
        yield srv
    await db.close()


def _dsn(srv: Any, user: str, password: str) -> str:
    return f"postgresql://{user}:{password}@127.0.0.1:{srv.port}/scratchpad?sslmode=disable"


async def test_the_right_password_signs_in(signed):
    async with await psycopg.AsyncConnection.connect(_dsn(signed, "ann", "s3cret")) as conn:
        cur = await conn.execute("SELECT current_user, count(*) FROM items")
        assert await cur.fetchone() == ("ann", 100)


async def test_a_wrong_password_and_an_unknown_user_fail_alike(signed):
    said = []
    for user, password in (("ann", "wrong"), ("nobody", "s3cret")):
        with pytest.raises(psycopg.OperationalError) as info:
            await psycopg.AsyncConnection.connect(_dsn(signed, user, password))
        said.append(str(info.value).replace(user, "<user>"))
    assert said[0] == said[1]
    assert 'password authentication failed for user "<user>"' in said[0]
