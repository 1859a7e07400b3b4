"""An asyncio protocol that feeds a transport's bytes straight into a sans-I/O codec.

Both ends of the server use it: the client connection (``server.net.connection``'s
``ClientHandler``) and each sidecar connection (``catalog._client``'s
``SidecarConnection``). The task that reads events from the codec waits, when it
needs more bytes, on ``more_data()``; after writing, on ``drain()`` while the
transport's buffer is full. No StreamReader copy, and one wake-up per arrival.
Bytes can also be answered in the callback itself: a sidecar connection's reply
is heard by its ``listener``, and a client connection reads its portal runs in
its own ``data_received``.

Rules:
- Memory with a ceiling, both ways. Bytes a client sent that are not yet events
  (a message half received) count, past ``read_ahead`` and ``FREE_BYTES``, against one
  server-wide ``Budget``; a connection whose bytes would pass it is ended with
  53200, and what it held is given back when it ends. And a client's read whose
  rows pass ``STREAM_AT`` bytes is relayed as they come (``Stream``, to the
  client's socket, a ``RowSink``), not kept whole; the sidecar socket is then
  its ``upstream``, and stops being read while the client's socket is full: its
  ``pause_writing`` holds the sidecar socket's reading, its ``resume_writing``
  lets it go. A read whose client cannot take its rows yet is kept, but not
  past its ``max_bytes``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from glove_scratchpad import errors
from glove_scratchpad.wire import ErrorResponse

__all__ = ["FREE_BYTES", "STREAM_AT", "Budget", "CodecProtocol", "RowSink", "Stream"]

# Unread bytes a connection holds past its ``read_ahead`` without counting against the
# budget: one read's worth (asyncio reads 256 KiB at most), so that messages read ahead
# never touch it, and only one that is larger, half received, does.
FREE_BYTES = 256 * 1024
# Bytes of a relayed result's rows from which they go on to the client as they come:
# below it, a result is kept whole (and can still be cut or refused whole).
STREAM_AT = 1024 * 1024


class Budget:
    """Bytes many connections hold at once, under one ceiling."""

    __slots__ = ("held", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def change(self, by: int) -> bool:
        """Hold ``by`` bytes more (or fewer): False, and nothing changed, past the limit."""
        if by > 0 and self.held + by > self.limit:
            return False
        self.held += by
        return True


class CodecProtocol(asyncio.Protocol):
    """Bytes received go into ``conn`` (a ``wire`` connection object)."""

    read_ahead: int | None = None  # unread bytes beyond which reading pauses (None: never)
    budget: Budget | None = None  # what unread bytes past FREE_BYTES count against

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._data: asyncio.Future[None] | None = None  # woken when bytes arrive
        self._drained: asyncio.Future[None] | None = None  # woken when writing resumes
        self._reading = True
        self._charged = 0  # bytes held against ``budget``
        self._free = (self.read_ahead or 0) + FREE_BYTES  # unread bytes it holds freely
        self.held = False  # reading stopped while a client's socket is full (``upstream``)
        # The socket whose reading stops while this one's writing is paused: a sidecar's,
        # while its rows are relayed to this client as they come.
        self.upstream: CodecProtocol | None = None
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
        buffered = self.conn.buffered
        if self.read_ahead is not None and self._reading and buffered > self.read_ahead:
            self._reading = False
            self.transport.pause_reading()  # type: ignore[union-attr]
        if self.budget is not None and (self._charged or buffered > self._free):
            self.charge()

    def charge(self) -> None:
        """Count the unread bytes past FREE_BYTES against the budget: past it, the
        connection ends with 53200 (and gives back what it held)."""
        assert self.budget is not None
        want = max(0, self.conn.buffered - self._free) if not self.closed else 0
        if self.budget.change(want - self._charged):
            self._charged = want
            return
        err = errors.OutOfMemory(
            "out of memory: the server holds too many bytes of messages not yet received "
            "whole", hint="Send smaller messages (a large value as several statements, or "
            "by COPY), or try again when fewer are in flight.")
        transport = self.transport
        assert transport is not None
        try:
            transport.write(ErrorResponse(err.as_fields() | {"S": "FATAL", "V": "FATAL"}
                                          ).encode())
        finally:
            self.closed = True
            transport.abort()  # its unread bytes go with it, not kept to be read
            self.give_back()

    def give_back(self) -> None:
        """What this connection held against the budget, given back (it ended)."""
        if self.budget is not None and self._charged:
            self.budget.change(-self._charged)
            self._charged = 0

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
        self.give_back()
        self.relay_from(None)
        self.arrived()
        _wake(self._drained)

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()
        upstream = self.upstream
        if upstream is not None:
            upstream.hold(True)

    def resume_writing(self) -> None:
        _wake(self._drained)
        self._drained = None
        upstream = self.upstream
        if upstream is not None:
            upstream.hold(False)

    def relay_from(self, upstream: CodecProtocol | None) -> None:
        """Relay from ``upstream`` from now on: its reading stops while this socket's
        writing is paused (now too, if it is). None: no more; what it held goes on."""
        old, self.upstream = self.upstream, upstream
        if old is not None and old is not upstream:
            old.hold(False)
        if upstream is not None and self._drained is not None:
            upstream.hold(True)

    def hold(self, held: bool) -> None:
        """Stop (or go on) reading the transport: a client is not reading what it relays."""
        if held is self.held or self.transport is None or self.closed:
            return
        self.held = held
        if held:
            self.transport.pause_reading()
        elif self._reading:  # not also paused for its own unread bytes
            self.transport.resume_reading()

    async def more_data(self) -> bool:
        """Wait for more bytes to reach the codec; False once the connection is closed."""
        if self.closed:
            return False
        if self._charged:
            self.charge()  # the task read what it waited for: the budget gets it back
        if not self._reading:
            self._reading = True
            if not self.held:
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


class RowSink(Protocol):
    """A client's socket, as a relayed result's rows reach it (``server.net``)."""

    def accepts(self) -> bool:
        """Whether the statement running now may have its rows relayed as they come."""
        ...

    def rows_begin(self, description: bytes, source: CodecProtocol) -> None:
        """The rows start: what goes before them is sent (``description``: the body of
        their RowDescription), and ``source``'s reading stops while the socket is full."""
        ...

    def rows(self, data: bytes) -> None:
        """Framed DataRows, to send."""
        ...

    def rows_end(self) -> None:
        """The rows are over (or abandoned): ``source`` is read freely again."""
        ...


@dataclass(slots=True)
class Stream:
    """A client's read whose rows are relayed as they come, past ``STREAM_AT`` bytes:
    those past ``limit`` are dropped (counted in ``cut``), and once ``max_bytes`` would
    be passed no more are sent (``over``). With no ``sink`` (its client reads them
    later, or none does), the rows are kept, but not past ``max_bytes``."""

    sink: RowSink | None
    limit: int | None
    max_bytes: int
    started: bool = False
    sent: int = 0  # rows
    size: int = 0  # their bodies' bytes, as ``max_bytes`` counts them
    cut: int = 0
    over: bool = False

    def take(self, rows: list[Any], held: int, description: bytes, source: CodecProtocol
             ) -> int:
        """Rows came (wire DataRows, as the sidecar sent them, after ``description``;
        ``held``: their bodies' bytes, counted as they came): kept below STREAM_AT
        bytes, else relayed, and no longer kept. The bytes still kept."""
        sink = self.sink
        if not self.started:
            if held < STREAM_AT and not self.over:
                return held
            if sink is None:  # kept whole: not past max_bytes
                if self.over or held > self.max_bytes:
                    self.over = True
                    rows.clear()  # and those that follow go too, as they come
                    return 0
                return held
            self.started = True
            sink.rows_begin(description, source)
        keep = rows
        if self.limit is not None and self.sent + len(rows) > self.limit:
            keep = rows[: max(0, self.limit - self.sent)]
            self.cut += len(rows) - len(keep)
            held = sum([len(row.raw_body) for row in keep])
        if keep and not self.over:
            size = self.size + held
            if size > self.max_bytes:
                self.over = True
            else:
                self.size, self.sent = size, self.sent + len(keep)
                sink.rows(b"".join([row.encode() for row in keep]))  # type: ignore[union-attr]
        rows.clear()
        return 0

    def end(self) -> None:
        if self.started and self.sink is not None:
            self.sink.rows_end()
