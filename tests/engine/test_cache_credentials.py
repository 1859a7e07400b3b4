"""A Python resolver that sees the user (a ``ctx`` parameter) keeps each user's lasting
calls apart, in memory, in kept tables and on the fast path; one that cannot see the
user shares them between users, as before."""

from __future__ import annotations

from collections import Counter
from typing import Any

import psycopg

from glove_scratchpad.resources import Bindings, CallContext, define_resource
from glove_scratchpad.server import Database

from ..fix_server import dsn, fetch, serving


def _resources(calls: Counter[tuple[str, str]]) -> list[Any]:
    columns = [("n", "bigint"), ("who", "text")]

    def seen_by(b: Bindings, ctx: CallContext) -> list[dict[str, Any]]:
        calls["seen_by", ctx.user] += 1
        return [{"n": n, "who": ctx.user} for n in range(3)]

    def kept_by(b: Bindings, ctx: CallContext) -> list[dict[str, Any]]:
        calls["kept_by", ctx.user] += 1
        return [{"n": n, "who": ctx.user} for n in range(500)]

    def shared(b: Bindings) -> list[dict[str, Any]]:
        calls["shared", ""] += 1
        return [{"n": n, "who": "anyone"} for n in range(3)]

    return [define_resource("seen_by", columns=columns, volatility="stable", ttl=60,
                            select=seen_by),
            define_resource("kept_by", columns=columns, volatility="immutable",
                            select=kept_by),
            define_resource("shared", columns=columns, volatility="stable", ttl=60,
                            select=shared)]


async def test_a_resolver_that_sees_the_user_keeps_each_users_calls(sidecar):
    calls: Counter[tuple[str, str]] = Counter()
    db = await Database.create(_resources(calls), sidecar=sidecar, database="creds_py")
    try:
        async with serving(db) as server:
            for user in ("alice", "bob", "alice", "bob"):
                for table, many in (("seen_by", 3), ("kept_by", 500)):
                    assert await fetch(dsn(server, user), f"SELECT who, count(*) FROM "
                                       f"{table} GROUP BY who") == [(user, many)]
                assert await fetch(dsn(server, user), "SELECT DISTINCT who FROM shared"
                                   ) == [("anyone",)]
            for _ in range(3):  # compiled reads answered from the caches: the fast path
                for user in ("alice", "bob"):
                    async with await psycopg.AsyncConnection.connect(
                            dsn(server, user), autocommit=True) as conn:
                        for table in ("seen_by", "kept_by"):
                            cur = await conn.execute(
                                f"SELECT who FROM {table} WHERE n = %s", (2,), prepare=True)
                            assert await cur.fetchall() == [(user,)]
    finally:
        await db.close()
    assert dict(calls) == {("seen_by", "alice"): 1, ("seen_by", "bob"): 1,
                           ("kept_by", "alice"): 1, ("kept_by", "bob"): 1,
                           ("shared", ""): 1}
