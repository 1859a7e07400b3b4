"""COPY on a sidecar connection, its data relayed to and from the client as it comes.

Rules:
- COPY TO STDOUT: the steps run as one pipeline in a transaction that is rolled
  back; the COPY step's CopyOutResponse, CopyData and CopyDone go to the client
  as the sidecar sends them, framed as they came (the bytes are Postgres's own).
  While the client's socket is full, the sidecar's is not read: at most one read's
  worth of rows is held here, however many the COPY sends.
- COPY FROM STDIN: the steps before the COPY run in a transaction, then the COPY
  itself; its CopyInResponse goes to the client, whose CopyData goes on to the
  sidecar until CopyDone (or CopyFail, which Postgres turns into its own 57014).
  Postgres parses the rows, so formats, escapes and errors with line numbers are
  its own. Then one more step reads what the COPY loaded, and all is rolled back.
- A connection left mid-reply (a cancel, a client gone) is never reused.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Protocol

from glove_scratchpad import errors
from glove_scratchpad.wire import (
    Bind,
    CommandComplete,
    CopyData,
    CopyDone,
    CopyFail,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    Flush,
    Parse,
    Query,
    RawMessage,
    ReadyForQuery,
    Sync,
)

from ._access import lost
from ._client import SidecarConnection, Step, StepResult

__all__ = ["CopyChannel", "copy_in", "copy_out"]

_READY = ord("Z")
_COPY_FRAMES = frozenset(b"Hdc")  # CopyOutResponse, CopyData, CopyDone
_HEADER = struct.Struct("!BI")
_SEND_AT = 256 * 1024  # bytes of CopyData sent on before the socket is drained


class CopyChannel(Protocol):
    """The client's side of a COPY, as its connection offers it."""

    async def begin(self) -> None:
        """Send what the client is owed before the COPY's first message."""

    def write(self, data: bytes) -> None:
        """Encoded messages for the client."""

    async def drain(self) -> None:
        """Wait until the client's socket takes more."""

    async def read(self) -> bytes | str | None:
        """The client's next CopyData; None at CopyDone; its message at CopyFail."""


async def copy_out(conn: SidecarConnection, steps: Sequence[Step],
                   parsed_under: tuple[Any, ...], channel: CopyChannel) -> list[StepResult]:
    """Run the steps (the last a COPY … TO STDOUT) in a transaction that is rolled back,
    relaying the COPY's messages to ``channel``; each step's result, the first error
    raised."""
    reply = conn._request(steps, "write", parsed_under)
    transport = conn._transport
    await channel.begin()
    try:
        await conn._drain()
        while not reply.ready:
            raw = conn._conn.raw_run(_COPY_FRAMES)  # the rows: relayed as they came
            if raw:
                await _relay(channel, transport, raw)
            frames, ready = conn._conn.frames_until(_READY)
            if not ready and not frames:
                try:
                    await conn._receive()
                except errors.SqlError:
                    raise lost(reply.error) from None
                continue
            out = [_HEADER.pack(kind, len(body) + 4) + body
                   for kind, body in frames if kind in _COPY_FRAMES]
            if out:  # copy messages read among others (its first, say): framed again
                await _relay(channel, transport, b"".join(out))
            if reply.feed(frames) and reply.status != b"I":
                conn._send(Query("ROLLBACK"))
                await conn._drain_until_ready()
    except BaseException:
        conn.broken = True  # mid-reply: never reuse this connection
        raise
    return conn._results(reply)


async def _relay(channel: CopyChannel, transport: Any, data: bytes) -> None:
    channel.write(data)
    transport.pause_reading()  # the client sets the pace
    try:
        await channel.drain()
    finally:
        transport.resume_reading()


def _step_messages(step: Step, describe: bool = False) -> list[Any]:
    params = step.params
    return [Parse("", step.sql, tuple(p.oid for p in params)),
            Bind("", "", tuple(p.format for p in params), tuple(p.value for p in params), ()),
            *((Describe("P"),) if describe else ()), Execute("", 0)]


async def copy_in(conn: SidecarConnection, before: Sequence[Step], copy: Step, after: Step,
                  channel: CopyChannel) -> tuple[str, list[DataRow]]:
    """Run ``before``, then ``copy`` (a COPY … FROM STDIN) fed by ``channel``, then
    ``after``, in one transaction that is rolled back: the COPY's tag and ``after``'s
    rows. The first error is raised once the client's data has all come."""
    messages: list[Any] = _step_messages(Step("BEGIN READ WRITE"))
    for step in (*before, copy):
        messages += _step_messages(step)
    conn._send(*messages, Flush())
    error: errors.SqlError | None = None
    tag, rows = "", []
    try:
        await conn._drain()
        while True:  # up to the CopyInResponse, or an error before it
            msg = await conn._next()
            if isinstance(msg, ErrorResponse):
                error = errors.SqlError.from_fields(msg.fields)
                conn._send(Sync())
                break
            if isinstance(msg, RawMessage) and msg.type_byte == b"G":
                channel.write(msg.encode())
                failed = await _pump(conn, channel)
                if failed is None:
                    conn._send(CopyDone(), *_step_messages(after, describe=True),
                               *_step_messages(Step("ROLLBACK")), Sync())
                else:
                    conn._send(CopyFail(failed), Sync())
                break
        await conn._drain()
        while not isinstance(msg := await conn._next(), ReadyForQuery):
            if isinstance(msg, ErrorResponse) and error is None:
                error = errors.SqlError.from_fields(msg.fields)
            elif isinstance(msg, CommandComplete) and not tag:
                tag = msg.tag
            elif isinstance(msg, DataRow):
                rows.append(msg)
        if msg.status != "I":
            conn._send(Query("ROLLBACK"))
            await conn._drain_until_ready()
    except BaseException:
        conn.broken = True
        raise
    if error is not None:
        raise error
    return tag, rows


async def _pump(conn: SidecarConnection, channel: CopyChannel) -> str | None:
    """The client's CopyData on to the sidecar, until CopyDone (None) or CopyFail (its
    message)."""
    sent = 0
    await channel.begin()
    while True:
        got = await channel.read()
        if got is None or isinstance(got, str):
            return got
        conn._send(CopyData(got))
        sent += len(got)
        if sent >= _SEND_AT:
            sent = 0
            await conn._drain()
        if conn.closed:
            raise lost()

