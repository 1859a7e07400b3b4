"""The tests' own HTTP API served by uvicorn on a free port, and a glove-scratchpad server
whose tables are made from its OpenAPI document.

``api_served()`` runs ``api_app`` in this event loop; ``tables_of(api, sidecar, base, **config)``
starts a Database and a wire server over the ``[[openapi.apis]]`` entry ``config``
(namespace ``t``, the document fetched from the API itself), with users ``ann`` and
``bob`` whose roles carry their own bearer tokens.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.auth import User, make_verifier
from glove_scratchpad.server.net.server import Server

from ..fix_http import http_served
from ..fix_server import serving
from .api_app import Recorder, make_app

_names = itertools.count()
PASSWORDS = {"ann": "ann-pw", "bob": "bob-pw", "eve": "eve-pw"}


@dataclass
class Api:
    url: str
    rec: Recorder


@asynccontextmanager
async def api_served() -> AsyncIterator[Api]:
    app, rec = make_app()
    async with http_served(app) as url:
        yield Api(url, rec)


@dataclass
class Tables:
    db: Database
    server: Server
    bridge: OpenApiBridge
    api: Api

    def dsn(self, user: str = "ann") -> str:
        return (f"postgresql://{user}:{PASSWORDS[user]}@127.0.0.1:{self.server.port}"
                "/scratchpad")

    async def connect(self, user: str = "ann") -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(self.dsn(user), autocommit=True)
        notices: list[tuple[str, str]] = []
        conn.add_notice_handler(lambda d: notices.append(
            (d.severity_nonlocalized or "", d.message_primary or "")))
        conn.notices = notices  # type: ignore[attr-defined]
        return conn


def api_entry(api: Api, **config: Any) -> dict[str, Any]:
    """The ``[[openapi.apis]]`` entry of the tests' API, with per-role tokens."""
    return {"namespace": "t", "spec": f"{api.url}/openapi.json", "retries": 2,
            "roles": {"ann": {"headers": {"Authorization": "Bearer ann-token"}},
                      "bob": {"headers": {"Authorization": "Bearer bob-token"}}},
            **config}


@asynccontextmanager
async def tables_of(api: Api, sidecar: Any, base: Path = Path("."),
                    limits: Limits | None = None, writes: bool = True, **config: Any
                    ) -> AsyncIterator[Tables]:
    """Tables of ``config`` (``base``: the folder of the config file it would be in;
    ``writes``: the server's --writes)."""
    bridge = OpenApiBridge([api_entry(api, **config)], base)
    resources = await bridge.load()
    db = await Database.create(resources, writes=writes, sidecar=sidecar, limits=limits,
                               database=f"openapi_{next(_names)}")
    users = {u: User(password=make_verifier(p), writes=writes) for u, p in PASSWORDS.items()}
    try:
        async with serving(db, writes=writes, users=users) as server:
            yield Tables(db, server, bridge, api)
    finally:
        await db.close()
        await bridge.aclose()
