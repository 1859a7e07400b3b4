"""Who a session is, over the wire: ``current_user``, ``session_user``,
``current_role`` and ``user`` answer the connecting role, as Postgres would, never
the sidecar's agent role; with a resource's rows or without, in the simple and the
extended protocol, and again from a text's cached records."""

from __future__ import annotations

import asyncpg
import psycopg
import pytest

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import rows, serving
from .fix_reliability import Note, Notes, fresh_name, serve

WHO = "SELECT current_user, session_user, current_role, user"


async def test_the_session_is_the_connecting_role(sidecar):
    notes = Notes()
    async with serve(sidecar, [notes.resource()]) as served:
        for user in ("ann", "bob", "ann"):
            conn = await served.connect(user)
            for _ in range(2):  # the second run from the text's records
                cur = await conn.execute(WHO)
                assert await cur.fetchall() == [(user,) * 4]
                cur = await conn.execute(
                    "SELECT title, current_user FROM notes WHERE current_user = %s "
                    "ORDER BY id", [user])
                assert await cur.fetchall() == [("first", user), ("second", user)]
            other = await asyncpg.connect(served.dsn(user))
            try:
                for _ in range(3):  # prepared: the fast path's compiled reads too
                    assert tuple(await other.fetchrow(WHO)) == (user,) * 4
                    assert await other.fetchval(
                        "SELECT current_user FROM notes WHERE id = $1", 1) == user
            finally:
                await other.close()


async def test_has_table_privilege_answers_for_the_role(sidecar):
    secrets = define_resource("secrets", schema=Note, primary_key=["id"],
                              volatility="volatile", select=lambda b: [])  # reads only
    db = await Database.create([Notes().resource(), secrets], writes=True, sidecar=sidecar,
                               database=fresh_name())
    users = {"ann": User(password=make_verifier("ann-pw"), writes=True, deny=["secrets"]),
             "cy": User(password=make_verifier("cy-pw"), writes=False)}
    asked = ("SELECT has_table_privilege('notes', 'SELECT'), "
             "has_table_privilege('notes', 'INSERT'), "
             "has_table_privilege(current_user, 'notes', 'UPDATE, DELETE'), "
             "has_table_privilege('notes', 'TRUNCATE')")
    try:
        async with serving(db, writes=True, users=users) as server:
            dsn = "postgresql://{0}:{0}-pw@127.0.0.1:" + f"{server.port}/scratchpad"
            async with await psycopg.AsyncConnection.connect(dsn.format("ann"),
                                                             autocommit=True) as conn:
                # The agent role the sidecar runs as holds no write: ann may write notes.
                assert await rows(conn, asked) == [(True, True, True, False)]
                with pytest.raises(psycopg.errors.UndefinedTable):  # as SELECT would say
                    await rows(conn, "SELECT has_table_privilege('secrets', 'SELECT')")
            async with await psycopg.AsyncConnection.connect(dsn.format("cy"),
                                                             autocommit=True) as conn:
                assert await rows(conn, asked) == [(True, False, False, False)]
                assert await rows(conn, "SELECT has_table_privilege('secrets', 'SELECT'), "
                                  "has_table_privilege('secrets', 'INSERT')") == [(True, False)]
    finally:
        await db.close()
