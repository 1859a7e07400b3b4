"""Field codecs and the Message base shared by frontend.py and backend.py.

Rules:
- A message class declares its body as ``layout``: one Field per dataclass
  field, in order, mirroring the "Message Formats" page; ``prefix`` holds
  fixed leading bytes (an authentication or request code). The base class
  encodes and decodes from that; only messages with cross-field rules or a
  hot path (Bind, DataRow) write their own.
- Integers are big-endian. Int16/Int32 are signed; OIDs, and counts that
  Postgres itself reads unsigned (pq_getmsgint), are unsigned.
- A String is UTF-8 ending in one NUL. Encoding a str holding NUL is a
  LocalProtocolError; decoding one without its NUL, or with invalid UTF-8,
  is a RemoteProtocolError. So is a truncated field, a value length below
  -1, a negative Int32 count, or any byte left over at the end of a body.
- Encoding uses struct and bytes joins only: no per-byte Python loops.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple, TypeVar

from .errors import LocalProtocolError, RemoteProtocolError

I16 = struct.Struct("!h")
U16 = struct.Struct("!H")
I32 = struct.Struct("!i")
U32 = struct.Struct("!I")
HEADER = struct.Struct("!ci")  # type byte + length (the length counts itself)
NULL_LENGTH = b"\xff\xff\xff\xff"  # Int32(-1): a NULL value
MEMO_SIZE = 1024  # encodings kept per memoizing message class


def cstr(text: str) -> bytes:
    if "\0" in text:
        raise LocalProtocolError(f"string contains a NUL byte: {text!r}")
    return text.encode() + b"\0"


def values_block(values: tuple[bytes | None, ...]) -> bytes:
    """Int16 count, then per value an Int32 length (-1 = NULL) and the bytes."""
    parts = [U16.pack(len(values))]
    for v in values:
        if v is None:
            parts.append(NULL_LENGTH)
        else:
            parts.append(I32.pack(len(v)))
            parts.append(v)
    return b"".join(parts)


class Reader:
    """A cursor over one message body; its only exception is RemoteProtocolError."""

    __slots__ = ("buf", "pos", "what")

    def __init__(self, buf: bytes, what: str) -> None:
        self.buf, self.pos, self.what = buf, 0, what

    def fail(self, problem: str) -> RemoteProtocolError:
        return RemoteProtocolError(f"invalid {self.what} message: {problem}")

    def take(self, n: int) -> bytes:
        pos = self.pos
        if n < 0 or pos + n > len(self.buf):
            raise self.fail(f"truncated field at offset {pos}")
        self.pos = pos + n
        return self.buf[pos : pos + n]

    def _int(self, s: struct.Struct) -> int:
        value: int = s.unpack(self.take(s.size))[0]
        return value

    def int16(self) -> int:
        return self._int(I16)

    def uint16(self) -> int:
        return self._int(U16)

    def int32(self) -> int:
        return self._int(I32)

    def uint32(self) -> int:
        return self._int(U32)

    def count32(self) -> int:
        n = self.int32()
        if n < 0:
            raise self.fail(f"negative count {n}")
        return n

    def rest(self) -> bytes:
        return self.take(len(self.buf) - self.pos)

    def byte(self) -> str:
        return chr(self.take(1)[0])

    def string(self) -> str:
        start = self.pos
        end = self.buf.find(b"\0", start)
        if end < 0:
            raise self.fail(f"string at offset {start} is missing its NUL terminator")
        self.pos = end + 1
        try:
            return self.buf[start:end].decode()
        except UnicodeDecodeError:
            raise self.fail(f"string at offset {start} is not valid UTF-8") from None

    def strings(self) -> tuple[str, ...]:
        """Strings up to an empty one (the terminating zero byte)."""
        out = []
        while s := self.string():
            out.append(s)
        return tuple(out)

    def value(self) -> bytes | None:
        n = self.int32()
        if n < -1:
            raise self.fail(f"invalid value length {n}")
        return None if n == -1 else self.take(n)

    def values(self) -> tuple[bytes | None, ...]:
        return tuple(self.value() for _ in range(self.uint16()))

    def array(self, fmt: str) -> tuple[int, ...]:
        n = self.uint16()
        return struct.unpack(f"!{n}{fmt}", self.take(n * struct.calcsize(fmt)))

    def finish(self) -> None:
        if self.pos != len(self.buf):
            raise self.fail(f"{len(self.buf) - self.pos} unexpected trailing bytes")


class Field(NamedTuple):
    """How one message field goes to bytes and back."""

    encode: Callable[[Any], bytes]
    decode: Callable[[Reader], Any]


def checked(field: Field, ok: Callable[[Any], bool], what: str) -> Field:
    """``field`` plus a validity rule, enforced in both directions."""

    def encode(v: Any) -> bytes:
        if not ok(v):
            raise LocalProtocolError(f"invalid {what}: {v!r}")
        return field.encode(v)

    def decode(r: Reader) -> Any:
        v = field.decode(r)
        if not ok(v):
            raise r.fail(f"invalid {what}: {v!r}")
        return v

    return Field(encode, decode)


def _array(fmt: str) -> Field:
    return Field(
        lambda v: U16.pack(len(v)) + struct.pack(f"!{len(v)}{fmt}", *v), lambda r: r.array(fmt)
    )


STRING = Field(cstr, Reader.string)
STRINGS = Field(lambda v: b"".join(map(cstr, v)) + b"\0", Reader.strings)  # zero-terminated
INT16 = Field(I16.pack, Reader.int16)
INT32 = Field(I32.pack, Reader.int32)
OID = Field(U32.pack, Reader.uint32)
REST = Field(bytes, Reader.rest)  # Byte_n up to the end of the message
BYTE = Field(lambda v: v.encode("latin-1"), Reader.byte)  # a one-character str
VALUE = Field(lambda v: NULL_LENGTH if v is None else I32.pack(len(v)) + v, Reader.value)
VALUES = Field(values_block, Reader.values)
FORMATS = _array("h")  # Int16 count + Int16 format codes
OIDS = _array("I")  # Int16 count + OIDs


class Message:
    """Base of every message: ``encode()`` is type byte + Int32 length + body."""

    __slots__ = ()
    type_byte: ClassVar[bytes] = b""  # empty for untyped startup packets
    prefix: ClassVar[bytes] = b""
    layout: ClassVar[tuple[Field, ...]] = ()

    def _body(self) -> bytes:
        # A slotted dataclass lists its fields, in order, in __slots__.
        pairs: zip[tuple[Field, str]] = zip(self.layout, self.__slots__, strict=True)
        return self.prefix + b"".join([f.encode(getattr(self, name)) for f, name in pairs])

    # ``class M(Message, memo=True)`` keeps the bytes of the values M has encoded: for
    # small messages a server sends again and again (BindComplete, ReadyForQuery, the
    # RowDescription of a prepared statement), a dict lookup instead of an encode.
    # ``decoded=True`` keeps decoded messages by body, for small ones a client sends
    # with every statement (Describe, Execute, Sync). Messages are immutable.
    memo: ClassVar[dict[Any, bytes] | None] = None
    decoded: ClassVar[dict[bytes, Any] | None] = None

    def __init_subclass__(cls, *, memo: bool = False, decoded: bool = False,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if memo:
            cls.memo = {}
        if decoded:
            cls.decoded = {}

    def encode(self) -> bytes:
        memo = self.memo
        if memo is None:
            return self._encode()
        try:
            data = memo.get(self)
        except TypeError:  # a field given as a list, say: encoded, not kept
            return self._encode()
        if data is None:
            data = self._encode()
            if len(memo) < MEMO_SIZE:
                memo[self] = data
        return data

    def _encode(self) -> bytes:
        try:
            body = self._body()
            tb = self.type_byte
            return (HEADER.pack(tb, len(body) + 4) if tb else I32.pack(len(body) + 4)) + body
        except (struct.error, OverflowError, UnicodeEncodeError, TypeError, AttributeError) as exc:
            raise LocalProtocolError(f"cannot encode {self!r}: {exc}") from exc

    @classmethod
    def read(cls, r: Reader) -> Any:
        r.take(len(cls.prefix))  # the dispatcher already matched it
        return cls(*[f.decode(r) for f in cls.layout])


M = TypeVar("M", bound=Message)  # a message class, and what decoding its body gives


def decode_with(cls: type[M], body: bytes) -> M:
    """``cls.read`` over a whole body; only RemoteProtocolError escapes."""
    known = cls.decoded
    if known is not None:
        msg: M | None = known.get(body)
        if msg is None:
            msg = _decode(cls, body)
            if len(known) < MEMO_SIZE:
                known[body] = msg
        return msg
    return _decode(cls, body)


def _decode(cls: type[M], body: bytes) -> M:
    r = Reader(body, cls.__name__)
    try:
        msg: M = cls.read(r)
    except RemoteProtocolError:
        raise
    except (struct.error, IndexError, ValueError, UnicodeDecodeError, TypeError) as exc:
        raise r.fail(str(exc)) from exc  # safety net for a check we forgot
    r.finish()
    return msg
