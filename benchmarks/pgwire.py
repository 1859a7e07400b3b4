"""A raw client of the PostgreSQL simple query protocol: start-up, then ``Query`` messages.

The idle-connections benchmark opens its clients with it, and the checks read with
it the answers of statements that pgbench times in ``-M simple`` (the same ``Query``
message). Values come back as text, as the server sent them. No authentication but
trust: the benchmark's endpoints ask for none.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from dataclasses import dataclass, field
from typing import Protocol


class _Address(Protocol):
    host: str
    port: int
    user: str
    database: str


@dataclass
class Answer:
    """The last statement's answer: its column names, rows (text or None) and tag."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple[str | None, ...]] = field(default_factory=list)
    tag: str = ""


def _startup(user: str, database: str) -> bytes:
    body = struct.pack("!i", 196608)  # protocol 3.0
    for k, v in (("user", user), ("database", database)):
        body += k.encode() + b"\0" + v.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def _error(body: bytes) -> str:
    fields = {f[:1]: f[1:].decode(errors="replace") for f in body.split(b"\0") if f}
    return f"{fields.get(b'C', '?')}: {fields.get(b'M', body.decode(errors='replace'))}"


def _data_row(body: bytes) -> tuple[str | None, ...]:
    (n,), at, out = struct.unpack_from("!h", body), 2, []
    for _ in range(n):
        (size,) = struct.unpack_from("!i", body, at)
        at += 4
        if size < 0:
            out.append(None)
        else:
            out.append(body[at : at + size].decode())
            at += size
    return tuple(out)


def _columns(body: bytes) -> list[str]:
    (n,), at, names = struct.unpack_from("!h", body), 2, []
    for _ in range(n):
        end = body.index(b"\0", at)
        names.append(body[at:end].decode())
        at = end + 1 + 18  # table oid, column, type oid, size, modifier, format
    return names


class SimpleClient:
    """One connection; ``query`` sends a ``Query`` and reads until ``ReadyForQuery``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, ep: _Address) -> SimpleClient:
        """Start-up on ``ep`` (TCP, or a Unix-socket directory when its host starts with /)."""
        if ep.host.startswith("/"):
            reader, writer = await asyncio.open_unix_connection(f"{ep.host}/.s.PGSQL.{ep.port}")
        else:
            reader, writer = await asyncio.open_connection(ep.host, ep.port)
        client = cls(reader, writer)
        writer.write(_startup(ep.user, ep.database))
        await writer.drain()
        try:
            await client._until_ready()
        except BaseException:
            writer.close()
            raise
        return client

    async def _message(self) -> tuple[bytes, bytes]:
        kind, length = struct.unpack("!ci", await self.reader.readexactly(5))
        return kind, await self.reader.readexactly(length - 4)

    async def _until_ready(self) -> Answer:
        answer, error = Answer(), None
        while True:
            try:
                kind, body = await self._message()
            except asyncio.IncompleteReadError:
                raise RuntimeError(error or "the connection closed") from None
            if kind == b"Z":
                if error is not None:
                    raise RuntimeError(error)
                return answer
            if kind == b"E":
                error = _error(body)
            elif kind == b"R" and struct.unpack_from("!i", body)[0] != 0:
                raise RuntimeError("the endpoint asks for a password: not supported here")
            elif kind == b"T":
                answer = Answer(columns=_columns(body))
            elif kind == b"D":
                answer.rows.append(_data_row(body))
            elif kind == b"C":
                answer.tag = body.rstrip(b"\0").decode()

    async def query(self, sql: str) -> Answer:
        """The answer of ``sql``'s last statement; an ErrorResponse raises RuntimeError."""
        data = sql.encode() + b"\0"
        self.writer.write(b"Q" + struct.pack("!i", len(data) + 4) + data)
        await self.writer.drain()
        return await self._until_ready()

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            if not self.writer.is_closing():
                self.writer.write(b"X\0\0\0\4")  # Terminate
                self.writer.close()
            await self.writer.wait_closed()


async def query_once(ep: _Address, sql: str) -> Answer:
    """One connection, one simple-protocol ``sql``, closed."""
    client = await SimpleClient.connect(ep)
    try:
        return await client.query(sql)
    finally:
        await client.close()
