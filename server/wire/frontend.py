"""Frontend (client -> server) messages of protocol 3.0 / 3.2.

Rules:
- One frozen, slotted dataclass per message, named as in the PostgreSQL
  "Message Formats" page; ``encode()`` gives the exact wire bytes, ``read()``
  the inverse over a body (see ``_codec.decode_with``).
- Startup packets (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest)
  have no type byte; ``decode_startup`` tells them apart by their code.
- Type byte 'p' means PasswordMessage, SASLInitialResponse or SASLResponse:
  only the server knows which, so they sit in PASSWORD_KINDS, not in
  FRONTEND_TYPES (the normal-phase table).
- Counts (Int16) are read unsigned, as Postgres does (65535 parameters are
  legal); value lengths are signed, -1 meaning NULL, other negatives invalid.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar

from ._codec import I32, Message, Reader, cstr, decode_with, int16_array, value, values_block
from .errors import LocalProtocolError, RemoteProtocolError

PROTOCOL_3_0 = 196608  # (3 << 16) | 0
PROTOCOL_3_2 = 196610  # (3 << 16) | 2, PostgreSQL 18: variable-length cancel keys
SSL_REQUEST_CODE = 80877103  # (1234 << 16) | 5679
GSSENC_REQUEST_CODE = 80877104  # (1234 << 16) | 5680
CANCEL_REQUEST_CODE = 80877102  # (1234 << 16) | 5678
MIN_CANCEL_KEY_LENGTH = 4  # protocol 3.0 keys are exactly 4 bytes
MAX_CANCEL_KEY_LENGTH = 256  # protocol 3.2 limit, from the Message Formats page

_FIXED = struct.Struct("!ii")


def effective_format(codes: tuple[int, ...], index: int) -> int:
    """Format of value ``index`` under the 0 / 1 / N format-code rule."""
    if not codes:
        return 0  # text
    return codes[0] if len(codes) == 1 else codes[index]


# --- startup packets (no type byte) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartupMessage(Message):
    protocol_version: int = PROTOCOL_3_0
    # user, database, options, application_name, replication, _pq_.* ...
    parameters: dict[str, str] = field(default_factory=dict)

    def _body(self) -> bytes:
        pairs = [cstr(k) + cstr(v) for k, v in self.parameters.items()]
        return I32.pack(self.protocol_version) + b"".join(pairs) + b"\0"

    @classmethod
    def read(cls, r: Reader) -> StartupMessage:
        version = r.int32()
        params: dict[str, str] = {}
        while name := r.string():  # an empty name is the terminator
            params[name] = r.string()
        return cls(version, params)


@dataclass(frozen=True, slots=True)
class SSLRequest(Message):
    def _body(self) -> bytes:
        return I32.pack(SSL_REQUEST_CODE)


@dataclass(frozen=True, slots=True)
class GSSENCRequest(Message):
    def _body(self) -> bytes:
        return I32.pack(GSSENC_REQUEST_CODE)


@dataclass(frozen=True, slots=True)
class CancelRequest(Message):
    process_id: int
    secret_key: bytes  # 4 bytes in protocol 3.0, up to 256 in 3.2

    def _body(self) -> bytes:
        return _FIXED.pack(CANCEL_REQUEST_CODE, self.process_id) + self.secret_key

    @classmethod
    def read(cls, r: Reader) -> CancelRequest:
        r.int32()  # the request code, already dispatched on
        pid = r.int32()
        key = r.rest()
        if not MIN_CANCEL_KEY_LENGTH <= len(key) <= MAX_CANCEL_KEY_LENGTH:
            raise r.fail(f"cancel key of {len(key)} bytes")
        return cls(pid, key)


def decode_startup(body: bytes) -> Message:
    """Decode a startup packet's body (everything after its length word)."""
    if len(body) < 4:
        raise RemoteProtocolError("invalid length of startup packet")
    code = I32.unpack_from(body)[0]
    if code in (SSL_REQUEST_CODE, GSSENC_REQUEST_CODE):
        if len(body) != 4:
            raise RemoteProtocolError("invalid length of encryption request packet")
        return SSLRequest() if code == SSL_REQUEST_CODE else GSSENCRequest()
    if code == CANCEL_REQUEST_CODE:
        return decode_with(CancelRequest, body)
    if code >> 16 == 3:  # any 3.x: the server decides what to negotiate down to
        return decode_with(StartupMessage, body)
    raise RemoteProtocolError(f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}")


# --- normal phase -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query(Message):
    type_byte: ClassVar[bytes] = b"Q"
    sql: str

    def _body(self) -> bytes:
        return cstr(self.sql)

    @classmethod
    def read(cls, r: Reader) -> Query:
        return cls(r.string())


@dataclass(frozen=True, slots=True)
class Parse(Message):
    type_byte: ClassVar[bytes] = b"P"
    name: str
    query: str
    param_type_oids: tuple[int, ...] = ()  # 0 = unspecified

    def _body(self) -> bytes:
        return cstr(self.name) + cstr(self.query) + int16_array(self.param_type_oids, "I")

    @classmethod
    def read(cls, r: Reader) -> Parse:
        return cls(r.string(), r.string(), r.oids())


@dataclass(frozen=True, slots=True)
class Bind(Message):
    type_byte: ClassVar[bytes] = b"B"
    portal: str = ""
    statement: str = ""
    param_formats: tuple[int, ...] = ()  # 0, 1 or len(params) codes
    params: tuple[bytes | None, ...] = ()
    result_formats: tuple[int, ...] = ()  # 0, 1 or one per result column

    def param_format(self, i: int) -> int:
        return effective_format(self.param_formats, i)

    def result_format(self, j: int) -> int:
        return effective_format(self.result_formats, j)

    def _body(self) -> bytes:
        return b"".join(
            (
                cstr(self.portal),
                cstr(self.statement),
                int16_array(self.param_formats),
                values_block(self.params),
                int16_array(self.result_formats),
            )
        )

    @classmethod
    def read(cls, r: Reader) -> Bind:
        portal, statement, formats = r.string(), r.string(), r.int16s()
        params = r.values()
        if len(formats) not in (0, 1, len(params)):
            raise r.fail(f"{len(formats)} parameter formats but {len(params)} parameters")
        return cls(portal, statement, formats, params, r.int16s())


def _kind(kind: str) -> bytes:
    if kind not in ("S", "P"):
        raise LocalProtocolError(f"kind must be 'S' or 'P', not {kind!r}")
    return kind.encode()


def _read_kind(r: Reader) -> str:
    kind = r.byte()
    if kind not in ("S", "P"):
        raise r.fail(f"invalid subtype {kind!r}")
    return kind


@dataclass(frozen=True, slots=True)
class Describe(Message):
    type_byte: ClassVar[bytes] = b"D"
    kind: str  # 'S' statement, 'P' portal
    name: str = ""

    def _body(self) -> bytes:
        return _kind(self.kind) + cstr(self.name)

    @classmethod
    def read(cls, r: Reader) -> Describe:
        return cls(_read_kind(r), r.string())


@dataclass(frozen=True, slots=True)
class Close(Message):
    type_byte: ClassVar[bytes] = b"C"
    kind: str  # 'S' statement, 'P' portal
    name: str = ""

    def _body(self) -> bytes:
        return _kind(self.kind) + cstr(self.name)

    @classmethod
    def read(cls, r: Reader) -> Close:
        return cls(_read_kind(r), r.string())


@dataclass(frozen=True, slots=True)
class Execute(Message):
    type_byte: ClassVar[bytes] = b"E"
    portal: str = ""
    max_rows: int = 0  # 0 = no limit

    def _body(self) -> bytes:
        return cstr(self.portal) + I32.pack(self.max_rows)

    @classmethod
    def read(cls, r: Reader) -> Execute:
        return cls(r.string(), r.int32())


@dataclass(frozen=True, slots=True)
class Flush(Message):
    type_byte: ClassVar[bytes] = b"H"


@dataclass(frozen=True, slots=True)
class Sync(Message):
    type_byte: ClassVar[bytes] = b"S"


@dataclass(frozen=True, slots=True)
class Terminate(Message):
    type_byte: ClassVar[bytes] = b"X"


@dataclass(frozen=True, slots=True)
class CopyData(Message):  # both directions
    type_byte: ClassVar[bytes] = b"d"
    data: bytes

    def _body(self) -> bytes:
        return self.data

    @classmethod
    def read(cls, r: Reader) -> CopyData:
        return cls(r.rest())


@dataclass(frozen=True, slots=True)
class CopyDone(Message):  # both directions
    type_byte: ClassVar[bytes] = b"c"


@dataclass(frozen=True, slots=True)
class CopyFail(Message):
    type_byte: ClassVar[bytes] = b"f"
    message: str

    def _body(self) -> bytes:
        return cstr(self.message)

    @classmethod
    def read(cls, r: Reader) -> CopyFail:
        return cls(r.string())


@dataclass(frozen=True, slots=True)
class FunctionCall(Message):
    type_byte: ClassVar[bytes] = b"F"
    function_oid: int
    arg_formats: tuple[int, ...] = ()
    args: tuple[bytes | None, ...] = ()
    result_format: int = 0

    def _body(self) -> bytes:
        return b"".join(
            (
                struct.pack("!I", self.function_oid),
                int16_array(self.arg_formats),
                values_block(self.args),
                struct.pack("!h", self.result_format),
            )
        )

    @classmethod
    def read(cls, r: Reader) -> FunctionCall:
        return cls(r.uint32(), r.int16s(), r.values(), r.int16())


# --- 'p': meaning depends on the authentication exchange -----------------------------


@dataclass(frozen=True, slots=True)
class PasswordMessage(Message):
    type_byte: ClassVar[bytes] = b"p"
    password: str  # cleartext, or "md5" + hex digest

    def _body(self) -> bytes:
        return cstr(self.password)

    @classmethod
    def read(cls, r: Reader) -> PasswordMessage:
        return cls(r.string())


@dataclass(frozen=True, slots=True)
class SASLInitialResponse(Message):
    type_byte: ClassVar[bytes] = b"p"
    mechanism: str
    data: bytes | None = None  # None = no initial response (Int32 -1)

    def _body(self) -> bytes:
        return cstr(self.mechanism) + value(self.data)

    @classmethod
    def read(cls, r: Reader) -> SASLInitialResponse:
        return cls(r.string(), r.value())


@dataclass(frozen=True, slots=True)
class SASLResponse(Message):
    type_byte: ClassVar[bytes] = b"p"
    data: bytes

    def _body(self) -> bytes:
        return self.data

    @classmethod
    def read(cls, r: Reader) -> SASLResponse:
        return cls(r.rest())


PASSWORD_KINDS: dict[str, type[Message]] = {
    c.__name__: c for c in (PasswordMessage, SASLInitialResponse, SASLResponse)
}

FRONTEND_TYPES: dict[int, type[Message]] = {
    c.type_byte[0]: c
    for c in (Query, Parse, Bind, Describe, Close, Execute, Flush, Sync, Terminate)
    + (CopyData, CopyDone, CopyFail, FunctionCall)
}


def decode_frontend(type_byte: int, body: bytes) -> Message:
    """Decode a normal-phase frontend message ('p' is not one: see PASSWORD_KINDS)."""
    cls = FRONTEND_TYPES.get(type_byte)
    if cls is None:
        raise RemoteProtocolError(f"invalid frontend message type {chr(type_byte)!r}")
    return decode_with(cls, body)
