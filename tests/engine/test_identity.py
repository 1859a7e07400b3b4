"""Who a session is, over the wire: ``current_user``, ``session_user``,
``current_role`` and ``user`` answer the connecting role, as Postgres would, never
the sidecar's agent role; with a resource's rows or without, in the simple and the
extended protocol, and again from a text's cached records."""

from __future__ import annotations

import asyncpg

from .fix_reliability import Notes, serve

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
