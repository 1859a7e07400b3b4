"""ReceiveBuffer: accumulate bytes, cut them into complete message frames.

Rules:
- Framing only: a frame is (type byte, body) or, for startup packets, the
  body after the length word. Decoding happens elsewhere.
- A length word counts itself, so it must be >= 4; the limits below are
  checked as soon as the header arrives, before buffering the body, so a
  peer cannot make us wait for (or allocate) a gigabyte it claimed.
- Consumed bytes are dropped lazily (an offset, compacted on the next
  ``feed``), so cutting many small frames from one read is linear.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._codec import I32, U32
from .errors import RemoteProtocolError

# Postgres' PQ_LARGE_MESSAGE_LIMIT (MaxAllocSize - 1): nothing bigger fits in a palloc.
MAX_MESSAGE_SIZE = 0x3FFFFFFF - 1
# PQ_SMALL_MESSAGE_LIMIT: Postgres' cap for messages that carry no user data (Sync, ...).
SMALL_MESSAGE_SIZE = 10_000
# PG_MAX_AUTH_TOKEN_LENGTH: the cap on password / SASL / GSS messages.
MAX_AUTH_MESSAGE_SIZE = 65_535
# MAX_STARTUP_PACKET_LENGTH: cap on the body of the first, untyped packet.
MAX_STARTUP_PACKET_LENGTH = 10_000


class ReceiveBuffer:
    __slots__ = ("_buf", "_pos", "feeds")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        # How many times bytes were fed: with ``view``'s offset, which only grows between
        # feeds, it names what the buffer holds (a read of it can be remembered by them).
        self.feeds = 0

    def feed(self, data: bytes) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data
        self.feeds += 1

    def __len__(self) -> int:
        return len(self._buf) - self._pos

    def peek(self) -> bytes:
        """The unconsumed bytes (a copy)."""
        return bytes(self._buf[self._pos :])

    def view(self) -> tuple[bytearray, int]:
        """The buffer and the offset of its first unconsumed byte, to read in place (no
        copy); ``skip_to`` consumes what was read."""
        return self._buf, self._pos

    def skip_to(self, end: int) -> None:
        """Consume the bytes before offset ``end`` (of ``view``'s buffer)."""
        if not self._pos <= end <= len(self._buf):
            raise ValueError(f"offset {end} is outside the unconsumed bytes")
        self._pos = end

    def _take(self, start: int, end: int) -> bytes:
        self._pos = end
        if end - start < 65536:
            return bytes(self._buf[start:end])  # two small copies beat a memoryview
        with memoryview(self._buf) as view:
            return bytes(view[start:end])  # one copy of a big body, not two

    def next_byte(self) -> int | None:
        """One raw byte (the answer to SSLRequest / GSSENCRequest)."""
        if self._pos >= len(self._buf):
            return None
        self._pos += 1
        return self._buf[self._pos - 1]

    def next_startup_packet(self) -> bytes | None:
        """Body of the next untyped packet (its length word stripped), or None."""
        pos = self._pos
        if len(self._buf) - pos < 4:
            return None
        size = I32.unpack_from(self._buf, pos)[0] - 4
        if not 4 <= size <= MAX_STARTUP_PACKET_LENGTH:
            raise RemoteProtocolError("invalid length of startup packet")
        if len(self._buf) - pos - 4 < size:
            return None
        return self._take(pos + 4, pos + 4 + size)

    def next_message(
        self, limits: Mapping[int, int] | None = None, default: int | None = MAX_MESSAGE_SIZE
    ) -> tuple[int, bytes] | None:
        """(type byte, body) of the next typed message, or None if incomplete.

        ``limits`` maps a type byte to its maximum length; other types get
        ``default``, and are refused on their first byte if that is None.
        """
        pos, buf = self._pos, self._buf
        if len(buf) - pos < 5:
            if len(buf) > pos and default is None and limits and buf[pos] not in limits:
                raise RemoteProtocolError(f"unexpected message type {chr(buf[pos])!r}")
            return None
        type_byte = buf[pos]
        limit = default if limits is None else limits.get(type_byte, default)
        if limit is None:
            raise RemoteProtocolError(f"unexpected message type {chr(type_byte)!r}")
        length = U32.unpack_from(buf, pos + 1)[0]
        if not 4 <= length <= limit:
            raise RemoteProtocolError(
                f"invalid message length {length} for message type {chr(type_byte)!r}"
            )
        end = pos + 1 + length
        if len(buf) < end:
            return None
        return type_byte, self._take(pos + 5, end)

    def raw_run(self, types: frozenset[int]) -> bytes:
        """The complete messages buffered at the head whose types are all in ``types``,
        as the bytes they came in, headers included (b"": none). A relay of COPY's
        CopyData passes them on in one slice, neither split nor framed again."""
        buf, pos, end = self._buf, self._pos, len(self._buf)
        unpack = U32.unpack_from
        start = pos
        while end - pos >= 5 and buf[pos] in types:
            length = unpack(buf, pos + 1)[0]
            if not 4 <= length <= MAX_MESSAGE_SIZE:
                raise RemoteProtocolError(
                    f"invalid message length {length} for message type {chr(buf[pos])!r}")
            if pos + 1 + length > end:
                break
            pos += 1 + length
        self._pos = pos
        return bytes(buf[start:pos])

    def messages_until(self, last: int) -> tuple[list[tuple[int, bytes]], bool]:
        """The complete typed messages buffered, up to and including the first of type
        ``last``; and whether that one was among them. Only MAX_MESSAGE_SIZE applies.

        One call for a whole reply: a relay reading many small frames pays for one
        Python call, not one per frame. What follows ``last`` stays buffered.
        """
        buf, pos, end = self._buf, self._pos, len(self._buf)
        unpack = U32.unpack_from
        out = []
        found = False
        while end - pos >= 5:
            type_byte = buf[pos]
            length = unpack(buf, pos + 1)[0]
            if not 4 <= length <= MAX_MESSAGE_SIZE:
                self._pos = pos
                raise RemoteProtocolError(
                    f"invalid message length {length} for message type {chr(type_byte)!r}")
            stop = pos + 1 + length
            if stop > end:
                break
            out.append((type_byte, bytes(buf[pos + 5 : stop])))
            pos = stop
            if type_byte == last:
                found = True
                break
        self._pos = pos
        return out, found

