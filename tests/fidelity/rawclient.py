"""A raw protocol client built from the project's own sans-I/O codec (ClientConnection).

It can talk to the server or, for a differential check, to the sidecar itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from glove_scratchpad.wire import (
    NEED_DATA,
    ClientConnection,
    ErrorResponse,
    ReadyForQuery,
    StartupMessage,
)

TIMEOUT = 15.0


class RawClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.conn = ClientConnection(validate_rows=True)

    @classmethod
    async def open(cls, host: str, port: int) -> RawClient:
        if host.startswith("/"):
            r, w = await asyncio.open_unix_connection(os.path.join(host, f".s.PGSQL.{port}"))
        else:
            r, w = await asyncio.open_connection(host, port)
        return cls(r, w)

    def send(self, *msgs: Any) -> None:
        self.writer.write(self.conn.send_many(msgs))

    async def recv(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            data = await asyncio.wait_for(self.reader.read(65536), TIMEOUT)
            if not data:
                raise EOFError("the server closed the connection")
            self.conn.receive_data(data)

    async def until_ready(self) -> list[Any]:
        """Every message up to and including ReadyForQuery."""
        out = []
        while True:
            msg = await self.recv()
            out.append(msg)
            if isinstance(msg, ReadyForQuery):
                return out

    async def take(self, n: int) -> list[Any]:
        return [await self.recv() for _ in range(n)]

    async def startup(self, user: str = "agent", database: str = "scratchpad",
                      **params: Any) -> list[Any]:
        """Start up; the messages up to ReadyForQuery, or up to a (fatal) error."""
        version = params.pop("protocol_version", None)
        msg = StartupMessage(parameters={"user": user, "database": database, **params})
        if version is not None:
            msg = StartupMessage(protocol_version=version, parameters=msg.parameters)
        self.send(msg)
        await self.writer.drain()
        out = []
        while True:
            m = await self.recv()
            out.append(m)
            if isinstance(m, ReadyForQuery | ErrorResponse):
                return out

    async def closed(self) -> bool:
        """True once the peer has closed (EOF); reads and drops anything before it."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), TIMEOUT):
                pass
        except (ConnectionError, TimeoutError):
            return self.reader.at_eof()
        return True

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


def types_of(msgs: list[Any]) -> list[str]:
    return [type(m).__name__ for m in msgs]
