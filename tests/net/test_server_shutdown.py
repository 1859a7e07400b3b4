"""Shutting down while statements run, and while a cancel is on its way."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.server import Server


async def test_shutdown_ends_a_statement_whose_cancel_arrives_at_the_same_time(sidecar):
    started = asyncio.Event()

    async def select(b):
        started.set()
        await asyncio.sleep(30)
        return []

    slow = define_resource("slow_for_shutdown", columns=[("k", "bigint")], keys=["k"],
                           volatility="volatile", select=select)
    db = await Database.create([slow], sidecar=sidecar, database="test_shutdown")
    server = Server(ServerConfig(port=0, shutdown_grace=0), db)
    await server.start()
    conn = await asyncpg.connect(f"postgresql://anyone@127.0.0.1:{server.port}/scratchpad")
    try:
        query = asyncio.ensure_future(conn.fetch("SELECT * FROM slow_for_shutdown WHERE k = 1"))
        await asyncio.wait_for(started.wait(), 10)
        [handler] = server.state.connections.values()
        # A CancelRequest, and in the same moment the cancel a shutdown sends every
        # connection's task: the connection must end, not take both for its statement's.
        handler.cancel()
        handler.task.cancel()
        done, _ = await asyncio.wait([handler.task], timeout=5)
        assert done, "the connection outlived its cancellation"
        await asyncio.wait_for(server.shutdown(), 5)
        assert not server.state.tasks
        # The statement ends with its connection; how the driver words that is its own.
        with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError)):
            await asyncio.wait_for(query, 5)
    finally:
        conn.terminate()
        await db.close()
