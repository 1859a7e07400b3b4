"""Low-level field codec shared by frontend.py and backend.py.

Rules:
- All integers are big-endian; Int16/Int32 are signed, OIDs and counts that
  Postgres itself reads as unsigned (pq_getmsgint) are read unsigned.
- A String is UTF-8 terminated by one NUL byte; encoding a str that contains
  NUL is a LocalProtocolError, decoding one without its NUL or with invalid
  UTF-8 is a RemoteProtocolError.
- A message's body must be consumed exactly: trailing bytes are an error.
- Encoding builds with struct and bytes joins only; no per-byte loops.
"""

from __future__ import annotations

import struct
from typing import ClassVar

from .errors import LocalProtocolError, RemoteProtocolError

I16 = struct.Struct("!h")
U16 = struct.Struct("!H")
I32 = struct.Struct("!i")
U32 = struct.Struct("!I")
HEADER = struct.Struct("!ci")  # type byte + length (which counts itself)
NULL_LENGTH = b"\xff\xff\xff\xff"  # Int32(-1): a NULL value


def cstr(value: str) -> bytes:
    """Encode a protocol String."""
    if "\0" in value:
        raise LocalProtocolError(f"string contains a NUL byte: {value!r}")
    return value.encode() + b"\0"


def value(v: bytes | None) -> bytes:
    """Int32 length (-1 = NULL) then the bytes."""
    return NULL_LENGTH if v is None else I32.pack(len(v)) + v


def values_block(values: tuple[bytes | None, ...]) -> bytes:
    """Int16 count, then Int32 length (-1 = NULL) and bytes for each value."""
    parts = [U16.pack(len(values))]
    for v in values:
        if v is None:
            parts.append(NULL_LENGTH)
        else:
            parts.append(I32.pack(len(v)))
            parts.append(v)
    return b"".join(parts)


def int16_array(items: tuple[int, ...], fmt: str = "h") -> bytes:
    return U16.pack(len(items)) + struct.pack(f"!{len(items)}{fmt}", *items)


class Message:
    """Base of every message: ``encode()`` = type byte + Int32 length + body.

    Startup-phase packets have an empty ``type_byte``. Subclasses are frozen,
    slotted dataclasses that implement ``_body()`` and ``read(reader)``.
    """

    __slots__ = ()
    type_byte: ClassVar[bytes] = b""

    def _body(self) -> bytes:
        return b""

    def encode(self) -> bytes:
        try:
            body = self._body()
            tb = self.type_byte
            return (HEADER.pack(tb, len(body) + 4) if tb else I32.pack(len(body) + 4)) + body
        except (struct.error, OverflowError, UnicodeEncodeError, TypeError) as exc:
            raise LocalProtocolError(f"cannot encode {self!r}: {exc}") from exc

    @classmethod
    def read(cls, r: Reader) -> Message:
        return cls()


class Reader:
    """A cursor over one message body that raises RemoteProtocolError only."""

    __slots__ = ("buf", "pos", "what")

    def __init__(self, buf: bytes, what: str) -> None:
        self.buf = buf
        self.pos = 0
        self.what = what

    def fail(self, problem: str) -> RemoteProtocolError:
        return RemoteProtocolError(f"invalid {self.what} message: {problem}")

    def _unpack(self, s: struct.Struct) -> int:
        pos = self.pos
        if pos + s.size > len(self.buf):
            raise self.fail(f"truncated field at offset {pos}")
        self.pos = pos + s.size
        return s.unpack_from(self.buf, pos)[0]

    def int16(self) -> int:
        return self._unpack(I16)

    def uint16(self) -> int:
        return self._unpack(U16)

    def int32(self) -> int:
        return self._unpack(I32)

    def uint32(self) -> int:
        return self._unpack(U32)

    def count32(self) -> int:
        n = self.int32()
        if n < 0:
            raise self.fail(f"negative count {n}")
        return n

    def take(self, n: int) -> bytes:
        pos = self.pos
        if n < 0 or pos + n > len(self.buf):
            raise self.fail(f"truncated field at offset {pos}")
        self.pos = pos + n
        return self.buf[pos : pos + n]

    def rest(self) -> bytes:
        return self.take(len(self.buf) - self.pos)

    def byte(self) -> str:
        return chr(self.take(1)[0])

    def string(self) -> str:
        end = self.buf.find(b"\0", self.pos)
        if end < 0:
            raise self.fail(f"string at offset {self.pos} is missing its NUL terminator")
        raw = self.buf[self.pos : end]
        self.pos = end + 1
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise self.fail(f"string at offset {end - len(raw)} is not valid UTF-8") from None

    def value(self) -> bytes | None:
        n = self.int32()
        if n == -1:
            return None
        if n < 0:
            raise self.fail(f"invalid value length {n}")
        return self.take(n)

    def values(self) -> tuple[bytes | None, ...]:
        return tuple(self.value() for _ in range(self.uint16()))

    def int16s(self) -> tuple[int, ...]:
        n = self.uint16()
        raw = self.take(2 * n)
        return struct.unpack(f"!{n}h", raw)

    def oids(self) -> tuple[int, ...]:
        n = self.uint16()
        raw = self.take(4 * n)
        return struct.unpack(f"!{n}I", raw)

    def finish(self) -> None:
        if self.pos != len(self.buf):
            raise self.fail(f"{len(self.buf) - self.pos} unexpected trailing bytes")


def decode_with(cls: type[Message], body: bytes) -> Message:
    """Run ``cls.read`` over a whole body; only RemoteProtocolError escapes."""
    r = Reader(body, cls.__name__)
    try:
        msg = cls.read(r)
    except RemoteProtocolError:
        raise
    except (struct.error, IndexError, ValueError, UnicodeDecodeError, TypeError) as exc:
        raise r.fail(str(exc)) from exc  # safety net: a reader check we forgot
    r.finish()
    return msg
