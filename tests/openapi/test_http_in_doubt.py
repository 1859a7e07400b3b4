"""An HTTP API's write whose outcome is unknown, over the wire: a POST that outlives
``timeout``, and one whose connection is dropped once the request is read.

The API (FastAPI on uvicorn, the test's own) creates the note, counting the request,
and then does not answer in time. The write is journaled ``in doubt``, the client gets
08007 saying it may have happened (never "try again"), and ``scratchpad.restage``
refuses it until told ``force => true``, which stages it again with the same key. A
POST whose connection could not even be opened did not happen: ``failed``, and
restaged without force.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import psycopg
import pytest
from fastapi import FastAPI, Header, Response
from pydantic import BaseModel

from ..fix_http import http_served
from ..fix_server import free_port, rows
from .fix_api import Api, tables_of

JOURNAL = ("SELECT seq, status, error, idempotency_key FROM scratchpad.journal "
           "WHERE txid = %s ORDER BY seq")
TIMEOUT = 0.5  # the API's timeout: the POST is held until the test lets it go


class NoteIn(BaseModel):
    title: str


class Note(BaseModel):
    id: int
    title: str


@dataclass
class SlowNotes:
    """A notes API whose POST creates the note, then waits for ``release`` while
    ``hold`` is set."""

    notes: dict[int, Note] = field(default_factory=dict)
    keys: list[str | None] = field(default_factory=list)  # each POST's Idempotency-Key
    hold: bool = True
    release: asyncio.Event = field(default_factory=asyncio.Event)
    gateway: int | None = None  # a status a gateway in front answers instead, once made

    def app(self) -> FastAPI:
        app = FastAPI(title="Slow notes")

        @app.get("/notes", operation_id="listNotes")
        def list_notes() -> list[Note]:
            return list(self.notes.values())

        @app.post("/notes", operation_id="createNote", status_code=201, response_model=Note)
        async def create(body: NoteIn,
                         idempotency_key: Annotated[str | None, Header()] = None) -> Any:
            self.keys.append(idempotency_key)
            note = Note(id=len(self.notes) + 1, title=body.title)
            self.notes[note.id] = note
            if self.gateway is not None:
                return Response(status_code=self.gateway)
            if self.hold:
                await self.release.wait()
            return note

        return app


@asynccontextmanager
async def slow_notes(sidecar: Any, **config: Any) -> AsyncIterator[tuple[SlowNotes, Any]]:
    api = SlowNotes()
    async with http_served(api.app()) as url:
        try:
            async with tables_of(Api(url, None), sidecar,  # type: ignore[arg-type]
                                 timeout=TIMEOUT, **config) as tables:
                yield api, tables
        finally:
            api.release.set()  # the held POST answers, to no one, and uvicorn can stop


def restage_txid(hint: str | None) -> int:
    found = re.search(r"restage\((\d+), force => true\)", hint or "")
    assert found, hint
    return int(found.group(1))


@pytest.mark.parametrize("in_tx", [True, False], ids=["in a transaction", "alone"])
async def test_a_post_past_the_timeout_is_in_doubt_and_restaged_only_by_force(sidecar, in_tx):
    async with slow_notes(sidecar) as (api, t), await t.connect() as conn:
        insert = "INSERT INTO t_list_notes (title) VALUES ('maybe')"
        if in_tx:
            await conn.execute("BEGIN")
            await conn.execute(insert)
            await conn.execute("INSERT INTO t_list_notes (title) VALUES ('after')")
        with pytest.raises(psycopg.errors.TransactionResolutionUnknown) as info:
            await conn.execute("COMMIT" if in_tx else insert)
        # The API got the POST and made the note: "failed" would have been a lie.
        assert [n.title for n in api.notes.values()] == ["maybe"] and len(api.keys) == 1
        error = info.value.diag
        assert error.sqlstate == "08007"
        assert "POST /notes: the request was sent and no answer came within 0.5 s, so the " \
            "write may have happened" in (error.message_primary or "")
        assert "try again" not in f"{error.message_primary} {error.message_hint}".lower()
        txid = restage_txid(error.message_hint)
        journal = await rows(conn, JOURNAL, txid)
        # The journal says what the client was told.
        (seq, status, journaled, key), *rest = journal
        assert (seq, status) == (1, "in doubt") and journaled in (error.message_primary or "")
        assert key == api.keys[0]
        if in_tx:
            assert [(s, st) for s, st, _, _ in rest] == [(2, "not run")]
            assert error.message_detail.endswith(": in doubt; #2 t_list_notes.insert(1 row): "
                                                 "not run")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE

        # Restage refuses it, says why, and stages nothing.
        with pytest.raises(psycopg.errors.InvalidTransactionState) as refused:
            await conn.execute(f"SELECT scratchpad.restage({txid})")
        assert refused.value.diag.message_primary.startswith(
            f"transaction {txid} has a write in doubt, so nothing of it is staged again: seq "
            "1 (t_list_notes insert) may have fired")
        assert f"restage({txid}, force => true)" in (refused.value.diag.message_hint or "")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert len(api.keys) == 1

        # Told to, it stages it (and what came after) again, with the first attempt's key.
        api.hold = False
        cur = await conn.execute(f"SELECT scratchpad.restage({txid}, force => true)")
        n = 2 if in_tx else 1
        assert (await cur.fetchone())[0].startswith(
            f"staged {n} write{'s' if n > 1 else ''} of transaction {txid} again")
        await conn.execute("COMMIT")
        assert api.keys[:2] == [key, key] and len(api.keys) == n + 1
        assert (await rows(conn, JOURNAL, txid))[0][1] == "in doubt"  # what happened then


class DropsAfterReading(asyncio.Protocol):
    """An HTTP server that reads a request whole, counts it, and drops the connection."""

    def __init__(self, seen: list[bytes]) -> None:
        self.seen, self.data = seen, b""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.data += data
        head, _, body = self.data.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        if _ and length and len(body) >= int(length.group(1)):
            self.seen.append(self.data)
            self.transport.abort()


async def test_a_connection_dropped_after_sending_is_in_doubt_and_one_never_opened_failed(
        sidecar):
    seen: list[bytes] = []
    loop = asyncio.get_running_loop()
    dropper = await loop.create_server(lambda: DropsAfterReading(seen), "127.0.0.1", 0)
    port = dropper.sockets[0].getsockname()[1]
    insert = "INSERT INTO t_list_notes (title) VALUES ('x')"
    try:
        async with slow_notes(sidecar, base_url=f"http://127.0.0.1:{port}") as (_, t), \
                await t.connect() as conn:
            with pytest.raises(psycopg.errors.TransactionResolutionUnknown) as info:
                await conn.execute(insert)
            assert len(seen) == 1 and seen[0].startswith(b"POST /notes ")
            assert "the connection failed once the request had left" in str(info.value)
            [(_, status, _, _)] = await rows(conn, JOURNAL, restage_txid(
                info.value.diag.message_hint))
            assert status == "in doubt"
    finally:
        dropper.close()
    # Nothing listens there: the request never left, so it did not happen.
    async with slow_notes(sidecar, base_url=f"http://127.0.0.1:{free_port()}") as (_, t), \
            await t.connect() as conn:
        with pytest.raises(psycopg.errors.IoError) as failed:
            await conn.execute(insert)
        assert "could not be reached: ConnectError" in str(failed.value)
        [(txid, status)] = await rows(conn, "SELECT txid, status FROM scratchpad.journal")
        assert status == "failed"
        cur = await conn.execute(f"SELECT scratchpad.restage({txid})")  # no force needed
        assert (await cur.fetchone())[0].startswith(f"staged 1 write of transaction {txid}")
        await conn.execute("ROLLBACK")


@pytest.mark.parametrize(("status", "doubt"), [(504, True), (502, True), (503, False)])
async def test_a_gateways_504_or_502_to_a_post_is_in_doubt(sidecar, status, doubt):
    # A 504 says the API behind the gateway did not answer in time, a 502 that it answered
    # with what the gateway could not relay: it may have made the note. A 503 is a refusal.
    async with slow_notes(sidecar) as (api, t), await t.connect() as conn:
        api.gateway = status
        expected = psycopg.errors.TransactionResolutionUnknown if doubt else \
            psycopg.errors.IoError
        with pytest.raises(expected) as info:
            await conn.execute("INSERT INTO t_list_notes (title) VALUES ('x')")
        [(outcome,)] = await rows(conn, "SELECT status FROM scratchpad.journal")
    assert len(api.keys) == 1
    assert outcome == ("in doubt" if doubt else "failed")
    if doubt:
        assert f"the request was sent and its gateway answered {status} " in str(info.value)
