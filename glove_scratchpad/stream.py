"""An asyncio protocol that feeds a transport's bytes straight into a sans-I/O codec.

Both ends of the server use it: the client connection (``protocol.ClientHandler``)
and each sidecar connection (``runner.SidecarConnection``). The task that reads
events from the codec waits, when it needs more bytes, on ``more_data()``; after
writing, on ``drain()`` while the transport's buffer is full. No StreamReader
copy, and one wake-up per arrival. Bytes can also be answered in the callback
itself: a sidecar connection's reply is heard by its ``listener``, and a client
connection reads its portal runs in its own ``data_received``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["CodecProtocol"]


class CodecProtocol(asyncio.Protocol):
    """Bytes received go into ``conn`` (a ``wire`` connection object)."""

    read_ahead: int | None = None  # unread bytes beyond which reading pauses (None: never)

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._data: asyncio.Future[None] | None = None  # woken when bytes arrive
        self._drained: asyncio.Future[None] | None = None  # woken when writing resumes
        self._reading = True
        # Called, in place of waking ``more_data``, while set: a reply read in callbacks.
        self.listener: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received(data)
        self.arrived()

    def received(self, data: bytes) -> None:
        """Bytes into the codec; reading pauses beyond ``read_ahead`` unread bytes."""
        self.conn.receive_data(data)
        if self.read_ahead is not None and self._reading and self.conn.buffered > self.read_ahead:
            self._reading = False
            self.transport.pause_reading()  # type: ignore[union-attr]

    def arrived(self) -> None:
        """Bytes came, or the end: the listener hears it, if one is set; otherwise the
        task waiting in ``more_data`` wakes."""
        listener = self.listener
        if listener is not None:
            listener()
        else:
            _wake(self._data)

    def wake(self) -> None:
        """Wake the task waiting in ``more_data``."""
        _wake(self._data)

    def eof_received(self) -> bool:
        self.closed = True
        self.arrived()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.arrived()
        _wake(self._drained)

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        _wake(self._drained)
        self._drained = None

    async def more_data(self) -> bool:
        """Wait for more bytes to reach the codec; False once the connection is closed."""
        if self.closed:
            return False
        if not self._reading:
            self._reading = True
            self.transport.resume_reading()  # type: ignore[union-attr]
        self._data = asyncio.get_running_loop().create_future()
        try:
            await self._data
        finally:
            self._data = None
        return True

    async def drain(self) -> None:
        """Wait while the transport's write buffer is full."""
        if self._drained is not None:
            await self._drained


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
