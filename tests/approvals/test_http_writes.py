"""A request of an HTTP API's writes holds the exact requests COMMIT would send (method,
URL, body); approved, they are sent once, with the credentials of the role that asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.approval_rules import ApprovalRules
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import serving
from ..openapi.fix_api import PASSWORDS, api_entry, api_served
from .fix_approvals import one

RULES = ApprovalRules(require=["t_list_things.*"], approvers=["bob"], wait_s=0.5)


async def test_the_request_holds_the_http_requests_and_fires_them_once(sidecar):
    async with api_served() as api:
        bridge = OpenApiBridge([api_entry(api)], Path("."))
        db = await Database.create(await bridge.load(), writes=True, sidecar=sidecar,
                                   database="test_appr_http", approvals=RULES)
        users = {u: User(password=make_verifier(p), writes=True) for u, p in PASSWORDS.items()}
        try:
            async with serving(db, writes=True, users=users) as server:
                def dsn(user: str) -> str:
                    return (f"postgresql://{user}:{PASSWORDS[user]}@127.0.0.1:{server.port}"
                            "/scratchpad")

                async with await psycopg.AsyncConnection.connect(dsn("ann"),
                                                                 autocommit=True) as conn:
                    api.rec.requests.clear()
                    try:
                        await conn.execute("INSERT INTO t_list_things (name, kind) VALUES "
                                           "('lamp', 'tool')")
                    except psycopg.errors.QueryCanceled:
                        pass
                    else:
                        raise AssertionError("the write was not held for approval")
                assert not [r for r in api.rec.requests if r[0] == "POST"]
                rid = await one(dsn("bob"), "SELECT max(id) FROM scratchpad.approvals")
                writes = await one(dsn("bob"), "SELECT writes FROM scratchpad.approvals "
                                   "WHERE id = %s", rid)
                [request] = writes[0]["requests"]
                assert request["method"] == "POST"
                assert request["url"] == f"{api.url}/things"
                assert request["body"]["name"] == "lamp"
                said = await one(dsn("bob"), "SELECT scratchpad.approve(%s, 'ok')", rid)
                assert "fired" in said
                await asyncio.sleep(0)
                posts = [r for r in api.rec.requests if r[0] == "POST"]
                assert len(posts) == 1
                made = [t for t in api.rec.things.values() if t.name == "lamp"]
                assert len(made) == 1
        finally:
            await db.close()
            await bridge.aclose()
