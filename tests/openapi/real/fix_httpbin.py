"""httpbin (PyPI, with flasgger for its Swagger document at ``/spec.json``), started on
loopback behind ``tests/fix_upstream``'s counting proxy, and a glove-scratchpad server
whose tables are made from that document.

``httpbin_served()`` is the running httpbin (``api.url``, ``api.requests``);
``served(api, sidecar, writes=…, **entry)`` the wire server over ``[[openapi.apis]]``
namespace ``hb`` (``entry``: more of its keys).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.net.server import Server

from ...fix_server import dsn, serving
from ...fix_upstream import Upstream, upstream

HTTPBIN = [sys.executable, "-m", "httpbin.core", "--port", "{port}"]
_names = itertools.count()


@asynccontextmanager
async def httpbin_served() -> AsyncIterator[Upstream]:
    async with upstream(HTTPBIN, ready="/get") as api:
        yield api


def entry(api: Upstream, **more: Any) -> dict[str, Any]:
    # The document names httpbin.org: base_url points the tables at the proxy.
    return {"namespace": "hb", "spec": f"{api.url}/spec.json", "base_url": api.url,
            "retries": 0, **more}


@asynccontextmanager
async def served(api: Upstream, sidecar: Any, *, writes: bool = False, **more: Any
                 ) -> AsyncIterator[tuple[Server, OpenApiBridge]]:
    bridge = OpenApiBridge([entry(api, **more)], Path("."))
    try:
        db = await Database.create(await bridge.load(), writes=writes, sidecar=sidecar,
                                   database=f"httpbin_{next(_names)}")
        try:
            async with serving(db, writes=writes) as server:
                api.clear()  # the document's fetch is not the tables'
                yield server, bridge
        finally:
            await db.close()
    finally:
        await bridge.aclose()


async def connect(server: Server) -> psycopg.AsyncConnection[Any]:
    conn = await psycopg.AsyncConnection.connect(dsn(server), autocommit=True)
    notices: list[tuple[str, str]] = []
    conn.add_notice_handler(lambda d: notices.append(
        (d.severity_nonlocalized or "", d.message_primary or "")))
    conn.notices = notices  # type: ignore[attr-defined]
    return conn
