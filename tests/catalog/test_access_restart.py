"""The sidecar restarted under a running server: every path to it recovers the same way.

The journal, the audit, the kept calls' tables and a client's statement each reach the
sidecar through one access layer (``catalog/_access.py``), with one reconnect policy:
an exchange that finds the sidecar gone waits for it (backoff, up to
``RECONNECT_WAIT``) and then runs, transparently. So a statement sent while the sidecar
is stopped gets its answer once it is back, and nothing it caused is lost or doubled:
its tool calls are audited once each, its write journaled once, ``fired``, and a kept
call is kept again.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..engine.fix_reliability import Notes, serve_db

DOWN = 1.5  # seconds the sidecar stays stopped: shorter than the reconnect policy's wait
SHELF = 60  # rows of the kept call

# Each path, exercised by one statement (run once before the stop, so its text is
# known, and once while the sidecar is down).
PATHS = {
    "statement": "SELECT count(*) FROM notes WHERE id = 1",
    "journal": "INSERT INTO notes (title) VALUES ('again')",
    "audit": "SELECT title FROM notes WHERE id = 2",
    "cache": "SELECT count(*) FROM shelf",
}
ANSWERS = {"statement": [(1,)], "journal": [], "audit": [("second",)], "cache": [(SHELF,)]}


def shelf_resource(calls: list[int]) -> Any:
    def shelf(b: Bindings) -> list[dict[str, Any]]:
        calls.append(1)
        return [{"id": i, "label": f"label {i}"} for i in range(1, SHELF + 1)]

    return define_resource("shelf", columns=[("id", "bigint"), ("label", "text")],
                           primary_key=["id"], volatility="immutable", select=shelf)


async def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = await conn.execute(sql)
    return await cur.fetchall() if cur.description else []


async def kept(conn: Any, within: float = 10.0) -> list[tuple[Any, ...]]:
    """The kept calls, once there is one (the store reopens in the background)."""
    deadline = time.monotonic() + within
    while True:
        found = await rows(conn, "SELECT resource FROM scratchpad.cache")
        if found or time.monotonic() > deadline:
            return found
        await rows(conn, PATHS["cache"])
        await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
async def external(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedSidecar]:
    """A sidecar of this module's own, which the tests stop and start (the session's is
    shared): the server reaches it by DSN, so it waits for it and never restarts it."""
    sidecar = EmbeddedSidecar(tmp_path_factory.mktemp("restart") / "pgdata")
    await sidecar.start()
    yield sidecar
    await sidecar.stop()


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_each_path_survives_a_sidecar_restart_the_same_way(external, path):
    notes, shelf_calls = Notes(), []
    db = await Database.create([notes.resource(), shelf_resource(shelf_calls)],
                               writes=True, sidecar_dsn=external.dsn,
                               database=f"restart_{path}", limits=Limits(cache_min_rows=20))
    async with serve_db(db) as served:
        conn, root = await served.connect(), await served.connect("root")
        sql = PATHS[path]
        await rows(conn, sql)  # its text is known: a statement's first exchange is a run
        if path == "cache":
            assert await kept(conn) == [("shelf",)]

        await asyncio.to_thread(external._stop_cluster)  # a clean stop: 57P01 to all
        back = threading.Timer(DOWN, external.restart_blocking)
        back.start()
        try:
            # Sent while the sidecar is down: its tools are called at once, its
            # sidecar exchanges wait for the sidecar, and it gets its answer.
            assert await rows(conn, sql) == ANSWERS[path]
        finally:
            back.join()

        # Works again after, and nothing was lost or doubled.
        assert await rows(conn, sql) == ANSWERS[path]
        if path == "cache":
            assert await kept(conn) == [("shelf",)]
        await asyncio.sleep(0.5)  # the audit's batch, written in the background
        audited = await rows(root, "SELECT resource, verb FROM scratchpad.calls"
                                   " WHERE resource IN ('notes', 'shelf')")
        made = [("notes", verb) for verb, *_ in notes.calls]
        assert sorted(audited) == sorted(made + [("shelf", "select")] * len(shelf_calls))
        journal = await rows(root, "SELECT txid, seq, status FROM scratchpad.journal")
        assert [s for _, _, s in journal] == ["fired"] * len(notes.writes())
        assert len({(t, s) for t, s, _ in journal}) == len(journal)
