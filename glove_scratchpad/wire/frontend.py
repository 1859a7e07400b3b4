"""Frontend (client -> server) messages of protocol 3.0 and 3.2.

Rules:
- One frozen, slotted dataclass per message, named as in the PostgreSQL
  docs; its ``layout`` lists the body's fields in wire order (see _codec).
- Startup packets (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest)
  have no type byte; ``decode_startup`` tells them apart by their code. Any
  3.x version is a StartupMessage: negotiating down is the server's call.
- Type byte 'p' is PasswordMessage, SASLInitialResponse or SASLResponse;
  only the authentication exchange says which, so they sit in
  PASSWORD_KINDS, not in FRONTEND_TYPES (the normal-phase table).
- Int16 counts are unsigned, as Postgres reads them (65535 parameters are
  legal); value lengths are signed, -1 meaning NULL.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ._codec import (
    BYTE,
    FORMATS,
    HEADER,
    I32,
    INT16,
    INT32,
    OID,
    OIDS,
    REST,
    STRING,
    U16,
    VALUE,
    VALUES,
    Field,
    Message,
    Reader,
    checked,
    cstr,
    decode_with,
    values_block,
)
from .errors import RemoteProtocolError

PROTOCOL_3_0 = 196608  # (3 << 16) | 0
PROTOCOL_3_2 = 196610  # (3 << 16) | 2: PostgreSQL 18, longer cancel keys
SSL_REQUEST_CODE = 80877103  # (1234 << 16) | 5679
GSSENC_REQUEST_CODE = 80877104  # (1234 << 16) | 5680
CANCEL_REQUEST_CODE = 80877102  # (1234 << 16) | 5678
CANCEL_KEY = checked(REST, lambda k: 4 <= len(k) <= 256, "cancel key length")  # 3.2: up to 256
KIND = checked(BYTE, lambda k: k in ("S", "P"), "kind ('S' statement or 'P' portal)")
PARAMETERS = Field(  # name/value String pairs, then a zero byte
    lambda d: b"".join([cstr(k) + cstr(v) for k, v in d.items()]) + b"\0",
    lambda r: {name: r.string() for name in iter(r.string, "")},
)


def effective_format(codes: tuple[int, ...], index: int) -> int:
    """Format code of value ``index`` under the 0 / 1 / N format-code rule."""
    if not codes:
        return 0  # text
    return codes[0] if len(codes) == 1 else codes[index]


# --- startup packets: no type byte ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartupMessage(Message):
    layout = (INT32, PARAMETERS)
    protocol_version: int = PROTOCOL_3_0
    # user, database, options, application_name, replication, _pq_.* ...
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SSLRequest(Message):
    prefix = INT32.encode(SSL_REQUEST_CODE)


@dataclass(frozen=True, slots=True)
class GSSENCRequest(Message):
    prefix = INT32.encode(GSSENC_REQUEST_CODE)


@dataclass(frozen=True, slots=True)
class CancelRequest(Message):
    prefix = INT32.encode(CANCEL_REQUEST_CODE)
    layout = (INT32, CANCEL_KEY)
    process_id: int
    secret_key: bytes  # 4 bytes in protocol 3.0, 4..256 in 3.2


def decode_startup(body: bytes) -> Message:
    """Decode an untyped first packet (its body: everything after the length)."""
    code = INT32.decode(Reader(body, "startup packet"))
    if code in (SSL_REQUEST_CODE, GSSENC_REQUEST_CODE):
        if len(body) != 4:
            raise RemoteProtocolError("invalid length of encryption request packet")
        return SSLRequest() if code == SSL_REQUEST_CODE else GSSENCRequest()
    if code == CANCEL_REQUEST_CODE:
        return decode_with(CancelRequest, body)
    if code >> 16 == 3:
        return decode_with(StartupMessage, body)
    raise RemoteProtocolError(f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}")


# --- normal phase -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query(Message):
    type_byte = b"Q"
    layout = (STRING,)
    sql: str


@dataclass(frozen=True, slots=True)
class Parse(Message):
    type_byte = b"P"
    layout = (STRING, STRING, OIDS)
    name: str
    query: str
    param_type_oids: tuple[int, ...] = ()  # 0: let the server infer


@dataclass(frozen=True, slots=True)
class Param:
    """One statement parameter, exactly as a client sent it: a Bind's value, its format
    code, and its type as Parse gave it."""

    value: bytes | None
    format: int = 0  # 0 text, 1 binary
    oid: int = 0  # 0: let Postgres infer the type


@dataclass(frozen=True, slots=True)
class Bind(Message):
    type_byte = b"B"
    layout = (STRING, STRING, FORMATS, VALUES, FORMATS)
    portal: str = ""
    statement: str = ""
    param_formats: tuple[int, ...] = ()  # 0, 1 or len(params) codes
    params: tuple[bytes | None, ...] = ()
    result_formats: tuple[int, ...] = ()  # 0, 1 or one per result column

    def param_format(self, i: int) -> int:
        return effective_format(self.param_formats, i)

    def result_format(self, j: int) -> int:
        return effective_format(self.result_formats, j)

    @classmethod
    def read(cls, r: Reader) -> Any:
        # Bind comes with every execution of a prepared statement: one pass of
        # unpack_from first; anything unusual takes the field-by-field path, which
        # words the error.
        msg = _read_bind(r)
        if msg is None:
            r.pos = 0
            msg = cls(*[f.decode(r) for f in cls.layout])
        if len(msg.param_formats) not in (0, 1, len(msg.params)):
            n, m = len(msg.param_formats), len(msg.params)
            raise r.fail(f"{n} parameter formats but {m} parameters")
        return msg


@dataclass(frozen=True, slots=True)
class Describe(Message, decoded=True):
    type_byte = b"D"
    layout = (KIND, STRING)
    kind: str  # 'S' prepared statement, 'P' portal
    name: str = ""


@dataclass(frozen=True, slots=True)
class Close(Message, decoded=True):
    type_byte = b"C"
    layout = (KIND, STRING)
    kind: str  # 'S' prepared statement, 'P' portal
    name: str = ""


@dataclass(frozen=True, slots=True)
class Execute(Message, decoded=True):
    type_byte = b"E"
    layout = (STRING, INT32)
    portal: str = ""
    max_rows: int = 0  # 0: no limit


@dataclass(frozen=True, slots=True)
class Flush(Message, decoded=True):
    type_byte = b"H"


@dataclass(frozen=True, slots=True)
class Sync(Message, decoded=True):
    type_byte = b"S"


@dataclass(frozen=True, slots=True)
class Terminate(Message):
    type_byte = b"X"


@dataclass(frozen=True, slots=True)
class CopyData(Message):  # both directions
    type_byte = b"d"
    layout = (REST,)
    data: bytes


@dataclass(frozen=True, slots=True)
class CopyDone(Message):  # both directions
    type_byte = b"c"


@dataclass(frozen=True, slots=True)
class CopyFail(Message):
    type_byte = b"f"
    layout = (STRING,)
    message: str


@dataclass(frozen=True, slots=True)
class FunctionCall(Message):
    type_byte = b"F"
    layout = (OID, FORMATS, VALUES, INT16)
    function_oid: int
    arg_formats: tuple[int, ...] = ()
    args: tuple[bytes | None, ...] = ()
    result_format: int = 0


# --- 'p': its meaning depends on the authentication exchange ------------------------


@dataclass(frozen=True, slots=True)
class PasswordMessage(Message):
    type_byte = b"p"
    layout = (STRING,)
    password: str  # cleartext, or "md5" + hex digest


@dataclass(frozen=True, slots=True)
class SASLInitialResponse(Message):
    type_byte = b"p"
    layout = (STRING, VALUE)
    mechanism: str
    data: bytes | None = None  # None: no initial response (length -1)


@dataclass(frozen=True, slots=True)
class SASLResponse(Message):
    type_byte = b"p"
    layout = (REST,)
    data: bytes


class BindTemplate:
    """The Binds of one prepared statement with its parameter formats: the bytes up to
    the values are made once. ``encode`` gives what ``Bind(...).encode()`` would."""

    __slots__ = ("_prefix",)

    def __init__(self, portal: str, statement: str, param_formats: tuple[int, ...]) -> None:
        self._prefix = cstr(portal) + cstr(statement) + FORMATS.encode(param_formats)

    def encode(self, params: tuple[bytes | None, ...], result_formats: tuple[int, ...] = ()
               ) -> bytes:
        body = self._prefix + values_block(params) + FORMATS.encode(result_formats)
        return HEADER.pack(b"B", len(body) + 4) + body


def read_bind(body: bytes) -> Bind | None:
    """A Bind body in one pass, or None unless every field is well formed and the body
    holds nothing after them (``Bind.read`` words the error of one that is not)."""
    r = Reader(body, "Bind")
    msg = _read_bind(r)
    if (msg is None or r.pos != len(body)
            or len(msg.param_formats) not in (0, 1, len(msg.params))):
        return None
    return msg


def _read_bind(r: Reader) -> Bind | None:
    """Bind in one pass over its body, or None where any field is not well formed."""
    buf, size = r.buf, len(r.buf)
    try:
        end = buf.index(0)
        portal = buf[:end].decode()
        start, end = end + 1, buf.index(0, end + 1)
        statement = buf[start:end].decode()
        pos = end + 1
        n = U16.unpack_from(buf, pos)[0]
        formats = struct.unpack_from(f"!{n}h", buf, pos + 2)
        pos += 2 + 2 * n
        count = U16.unpack_from(buf, pos)[0]
        pos += 2
        values: list[bytes | None] = []
        for _ in range(count):
            length = I32.unpack_from(buf, pos)[0]
            pos += 4
            if length == -1:
                values.append(None)
            elif length >= 0 and pos + length <= size:
                values.append(buf[pos : pos + length])
                pos += length
            else:
                return None
        n = U16.unpack_from(buf, pos)[0]
        result_formats = struct.unpack_from(f"!{n}h", buf, pos + 2)
        pos += 2 + 2 * n
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    r.pos = pos
    return Bind(portal, statement, formats, tuple(values), result_formats)


PASSWORD_KINDS: dict[str, type[Message]] = {
    c.__name__: c for c in (PasswordMessage, SASLInitialResponse, SASLResponse)
}
FRONTEND_TYPES: dict[int, type[Message]] = {
    c.type_byte[0]: c
    for c in (
        *(Query, Parse, Bind, Describe, Close, Execute, Flush, Sync, Terminate),
        *(CopyData, CopyDone, CopyFail, FunctionCall),
    )
}


def decode_frontend(type_byte: int, body: bytes) -> Message:
    """Decode a normal-phase frontend message ('p' is not one: see PASSWORD_KINDS)."""
    cls = FRONTEND_TYPES.get(type_byte)
    if cls is None:
        raise RemoteProtocolError(f"invalid frontend message type {chr(type_byte)!r}")
    return decode_with(cls, body)
