"""Backend (server -> client) messages, plus RawMessage for pre-encoded bytes.

Rules:
- Same shape as frontend.py: frozen, slotted dataclasses named as in the
  PostgreSQL docs, ``encode()`` exact, ``read()`` strict.
- The 'R' family is told apart by its Int32 code; codes we do not speak
  (Kerberos, GSSAPI, SSPI) are a RemoteProtocolError.
- DataRow is the one hand-written class: a relayed row keeps the body it
  arrived with (``raw_body``) and is split into values only if someone reads
  ``values``; re-encoding a relayed row is header + body, nothing more.
- RawMessage(type_byte, body) sends any pre-encoded message as-is; the
  client side also yields it for backend types we do not model (COPY
  responses, FunctionCallResponse), so a relay can pass them through.
- OIDs are unsigned Int32; type_size, column_attr and type_modifier signed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, ClassVar

from ._codec import HEADER, I32, NULL_LENGTH, U16, U32, Message, Reader, cstr, decode_with
from .errors import LocalProtocolError, RemoteProtocolError
from .frontend import CopyData, CopyDone

MIN_KEY_LENGTH = 4  # BackendKeyData: 4 bytes in 3.0; 4..256 in protocol 3.2
MAX_KEY_LENGTH = 256


@dataclass(frozen=True, slots=True)
class RawMessage(Message):
    """Any message, already encoded: ``encode()`` is header + body."""

    # field(): no default, though Message has a class-level type_byte.
    type_byte: bytes = field()  # type: ignore[misc]  # per instance here only
    body: bytes = field()

    def _body(self) -> bytes:
        return self.body


@dataclass(frozen=True, slots=True)
class SSLResponse(Message):
    """The backend's one-byte answer to SSLRequest: 'S' (start TLS) or 'N'."""

    accepted: bool

    def encode(self) -> bytes:  # a bare byte, not a framed message
        return b"S" if self.accepted else b"N"


@dataclass(frozen=True, slots=True)
class GSSENCResponse(Message):
    """The backend's one-byte answer to GSSENCRequest: 'G' (start GSSAPI) or 'N'."""

    accepted: bool

    def encode(self) -> bytes:
        return b"G" if self.accepted else b"N"


# --- authentication ('R') -----------------------------------------------------------


class _Authentication(Message):
    __slots__ = ()
    type_byte = b"R"
    auth_code: ClassVar[int]

    def _body(self) -> bytes:
        return I32.pack(self.auth_code) + self._auth_data()

    def _auth_data(self) -> bytes:
        return b""

    @classmethod
    def read(cls, r: Reader) -> Message:
        r.int32()  # the code, already dispatched on
        return cls._read_data(r)

    @classmethod
    def _read_data(cls, r: Reader) -> Message:
        return cls()


@dataclass(frozen=True, slots=True)
class AuthenticationOk(_Authentication):
    auth_code: ClassVar[int] = 0


@dataclass(frozen=True, slots=True)
class AuthenticationCleartextPassword(_Authentication):
    auth_code: ClassVar[int] = 3


@dataclass(frozen=True, slots=True)
class AuthenticationMD5Password(_Authentication):
    auth_code: ClassVar[int] = 5
    salt: bytes  # exactly 4 bytes

    def _auth_data(self) -> bytes:
        if len(self.salt) != 4:
            raise LocalProtocolError("MD5 salt must be 4 bytes")
        return self.salt

    @classmethod
    def _read_data(cls, r: Reader) -> Message:
        return cls(r.take(4))


@dataclass(frozen=True, slots=True)
class AuthenticationSASL(_Authentication):
    auth_code: ClassVar[int] = 10
    mechanisms: tuple[str, ...]  # in the server's order of preference

    def _auth_data(self) -> bytes:
        return b"".join(map(cstr, self.mechanisms)) + b"\0"

    @classmethod
    def _read_data(cls, r: Reader) -> Message:
        names = []
        while name := r.string():
            names.append(name)
        return cls(tuple(names))


@dataclass(frozen=True, slots=True)
class AuthenticationSASLContinue(_Authentication):
    auth_code: ClassVar[int] = 11
    data: bytes

    def _auth_data(self) -> bytes:
        return self.data

    @classmethod
    def _read_data(cls, r: Reader) -> Message:
        return cls(r.rest())


@dataclass(frozen=True, slots=True)
class AuthenticationSASLFinal(_Authentication):
    auth_code: ClassVar[int] = 12
    data: bytes

    def _auth_data(self) -> bytes:
        return self.data

    @classmethod
    def _read_data(cls, r: Reader) -> Message:
        return cls(r.rest())


AUTH_TYPES: dict[int, type[_Authentication]] = {
    c.auth_code: c
    for c in (
        AuthenticationOk,
        AuthenticationCleartextPassword,
        AuthenticationMD5Password,
        AuthenticationSASL,
        AuthenticationSASLContinue,
        AuthenticationSASLFinal,
    )
}

# --- session status -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackendKeyData(Message):
    type_byte: ClassVar[bytes] = b"K"
    process_id: int
    secret_key: bytes  # exactly 4 bytes for protocol 3.0 peers

    def _body(self) -> bytes:
        if not MIN_KEY_LENGTH <= len(self.secret_key) <= MAX_KEY_LENGTH:
            raise LocalProtocolError(f"secret key of {len(self.secret_key)} bytes")
        return I32.pack(self.process_id) + self.secret_key

    @classmethod
    def read(cls, r: Reader) -> BackendKeyData:
        pid, key = r.int32(), r.rest()
        if not MIN_KEY_LENGTH <= len(key) <= MAX_KEY_LENGTH:
            raise r.fail(f"secret key of {len(key)} bytes")
        return cls(pid, key)


@dataclass(frozen=True, slots=True)
class ParameterStatus(Message):
    type_byte: ClassVar[bytes] = b"S"
    name: str
    value: str

    def _body(self) -> bytes:
        return cstr(self.name) + cstr(self.value)

    @classmethod
    def read(cls, r: Reader) -> ParameterStatus:
        return cls(r.string(), r.string())


@dataclass(frozen=True, slots=True)
class ReadyForQuery(Message):
    type_byte: ClassVar[bytes] = b"Z"
    status: str = "I"  # 'I' idle, 'T' in transaction, 'E' failed transaction

    def _body(self) -> bytes:
        if self.status not in ("I", "T", "E"):
            raise LocalProtocolError(f"invalid transaction status {self.status!r}")
        return self.status.encode()

    @classmethod
    def read(cls, r: Reader) -> ReadyForQuery:
        status = r.byte()
        if status not in ("I", "T", "E"):
            raise r.fail(f"invalid transaction status {status!r}")
        return cls(status)


@dataclass(frozen=True, slots=True)
class NegotiateProtocolVersion(Message):
    type_byte: ClassVar[bytes] = b"v"
    newest_minor: int
    unrecognized_options: tuple[str, ...] = ()

    def _body(self) -> bytes:
        names = b"".join(map(cstr, self.unrecognized_options))
        return struct.pack("!ii", self.newest_minor, len(self.unrecognized_options)) + names

    @classmethod
    def read(cls, r: Reader) -> NegotiateProtocolVersion:
        minor, n = r.int32(), r.count32()
        return cls(minor, tuple(r.string() for _ in range(n)))


@dataclass(frozen=True, slots=True)
class NotificationResponse(Message):
    type_byte: ClassVar[bytes] = b"A"
    process_id: int
    channel: str
    payload: str

    def _body(self) -> bytes:
        return I32.pack(self.process_id) + cstr(self.channel) + cstr(self.payload)

    @classmethod
    def read(cls, r: Reader) -> NotificationResponse:
        return cls(r.int32(), r.string(), r.string())


# --- errors and notices -------------------------------------------------------------

FIELD_CODES = {  # keyword -> one-letter code, from "Error and Notice Message Fields"
    "severity": "S",
    "severity_nonlocalized": "V",
    "code": "C",
    "message": "M",
    "detail": "D",
    "hint": "H",
    "position": "P",
    "internal_position": "p",
    "internal_query": "q",
    "where": "W",
    "schema_name": "s",
    "table_name": "t",
    "column_name": "c",
    "data_type_name": "d",
    "constraint_name": "n",
    "file": "F",
    "line": "L",
    "routine": "R",
}


class _Fields(Message):
    """Shared by ErrorResponse and NoticeResponse: ``fields`` keyed by code."""

    __slots__ = ()
    fields: dict[str, str]

    def _body(self) -> bytes:
        parts = []
        for code, text in self.fields.items():
            if len(code) != 1 or code == "\0":
                raise LocalProtocolError(f"field code must be one character, not {code!r}")
            parts.append(code.encode("latin-1") + cstr(text))
        return b"".join(parts) + b"\0"

    @classmethod
    def read(cls, r: Reader) -> Any:
        fields = {}
        while (code := r.byte()) != "\0":
            fields[code] = r.string()
        return cls(fields)  # type: ignore[call-arg]

    @classmethod
    def build(
        cls,
        severity: str,
        code: str,
        message: str,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        **other_fields: str | int | None,
    ) -> Any:
        """Build from keywords (see FIELD_CODES); V copies S, as Postgres sends both."""
        named = {"severity": severity, "severity_nonlocalized": severity, "code": code}
        named |= {"message": message, "detail": detail, "hint": hint, "position": position}
        named |= other_fields
        unknown = set(named) - set(FIELD_CODES)
        if unknown:
            raise LocalProtocolError(f"unknown error fields: {sorted(unknown)}")
        return cls({FIELD_CODES[k]: str(v) for k, v in named.items() if v is not None})  # type: ignore[call-arg]

    severity = property(lambda self: self.fields.get("S"))
    code = property(lambda self: self.fields.get("C"))
    message = property(lambda self: self.fields.get("M"))
    detail = property(lambda self: self.fields.get("D"))
    hint = property(lambda self: self.fields.get("H"))

    @property
    def position(self) -> int | None:
        p = self.fields.get("P", "")
        return int(p) if p.isascii() and p.isdigit() else None


@dataclass(frozen=True, slots=True)
class ErrorResponse(_Fields):
    type_byte: ClassVar[bytes] = b"E"
    fields: dict[str, str]


@dataclass(frozen=True, slots=True)
class NoticeResponse(_Fields):
    type_byte: ClassVar[bytes] = b"N"
    fields: dict[str, str]


def error_response(
    severity: str,
    code: str,
    message: str,
    detail: str | None = None,
    hint: str | None = None,
    position: int | None = None,
    **other_fields: str | int | None,
) -> ErrorResponse:
    """ErrorResponse from keywords, e.g. ``error_response("ERROR", "42P01", "...")``."""
    return ErrorResponse.build(severity, code, message, detail, hint, position, **other_fields)


# --- query results ------------------------------------------------------------------

_FIELD = struct.Struct("!IhIhih")  # table oid, attnum, type oid, typlen, typmod, format


@dataclass(frozen=True, slots=True)
class FieldDescription:
    name: str
    table_oid: int = 0
    column_attr: int = 0
    type_oid: int = 25  # text
    type_size: int = -1  # -1 varlena, -2 cstring
    type_modifier: int = -1
    format: int = 0  # 0 text, 1 binary


@dataclass(frozen=True, slots=True)
class RowDescription(Message):
    type_byte: ClassVar[bytes] = b"T"
    fields: tuple[FieldDescription, ...]

    def _body(self) -> bytes:
        parts = [U16.pack(len(self.fields))]
        for f in self.fields:
            parts.append(cstr(f.name))
            parts.append(
                _FIELD.pack(
                    f.table_oid, f.column_attr, f.type_oid, f.type_size, f.type_modifier, f.format
                )
            )
        return b"".join(parts)

    @classmethod
    def read(cls, r: Reader) -> RowDescription:
        fields = []
        for _ in range(r.uint16()):
            name = r.string()
            fields.append(FieldDescription(name, *_FIELD.unpack(r.take(_FIELD.size))))
        return cls(tuple(fields))


def _split_row(body: bytes) -> tuple[bytes | None, ...]:
    """DataRow body -> values; a tight loop because it runs once per row."""
    end = len(body)
    if end < 2:
        raise RemoteProtocolError("invalid DataRow message: truncated column count")
    n = U16.unpack_from(body)[0]
    pos, out = 2, []
    unpack = I32.unpack_from
    for _ in range(n):
        if pos + 4 > end:
            raise RemoteProtocolError("invalid DataRow message: truncated column length")
        size = unpack(body, pos)[0]
        pos += 4
        if size == -1:
            out.append(None)
        elif 0 <= size <= end - pos:
            out.append(body[pos : pos + size])
            pos += size
        else:
            raise RemoteProtocolError(f"invalid DataRow message: bad column length {size}")
    if pos != end:
        raise RemoteProtocolError("invalid DataRow message: unexpected trailing bytes")
    return tuple(out)


def _join_row(values: tuple[bytes | None, ...]) -> bytes:
    parts = [U16.pack(len(values))]
    for v in values:
        if v is None:
            parts.append(NULL_LENGTH)
        else:
            parts.append(I32.pack(len(v)))
            parts.append(v)
    return b"".join(parts)


class DataRow(Message):
    """One row: ``DataRow(values)`` or ``DataRow.raw(body)`` for relayed rows.

    Immutable; ``values`` and ``raw_body`` are each computed from the other
    on first use. Equality compares the encoded body.
    """

    __slots__ = ("_raw", "_values")
    type_byte = b"D"
    _raw: bytes | None
    _values: tuple[bytes | None, ...] | None

    def __init__(self, values: Iterable[bytes | None] = ()) -> None:
        object.__setattr__(self, "_values", tuple(values))
        object.__setattr__(self, "_raw", None)

    @classmethod
    def raw(cls, body: bytes) -> DataRow:
        """Wrap an already-encoded body without looking at it."""
        row = cls.__new__(cls)
        object.__setattr__(row, "_raw", body)
        object.__setattr__(row, "_values", None)
        return row

    @property
    def values(self) -> tuple[bytes | None, ...]:
        if self._values is None:
            object.__setattr__(self, "_values", _split_row(self._raw or b""))
        return self._values  # type: ignore[return-value]

    @property
    def raw_body(self) -> bytes:
        if self._raw is None:
            object.__setattr__(self, "_raw", _join_row(self._values or ()))
        return self._raw  # type: ignore[return-value]

    def _body(self) -> bytes:
        return self.raw_body

    def encode(self) -> bytes:
        body = self.raw_body  # the hot path of a relay: skip the generic wrapper
        return HEADER.pack(b"D", len(body) + 4) + body

    @classmethod
    def read(cls, r: Reader) -> DataRow:
        return cls.raw(r.rest())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataRow) and self.raw_body == other.raw_body

    def __hash__(self) -> int:
        return hash(self.raw_body)

    def __repr__(self) -> str:
        if self._values is not None:
            return f"DataRow({self._values!r})"
        return f"DataRow.raw({self._raw!r})"


@dataclass(frozen=True, slots=True)
class CommandComplete(Message):
    type_byte: ClassVar[bytes] = b"C"
    tag: str  # e.g. "SELECT 1", "INSERT 0 3"

    def _body(self) -> bytes:
        return cstr(self.tag)

    @classmethod
    def read(cls, r: Reader) -> CommandComplete:
        return cls(r.string())


@dataclass(frozen=True, slots=True)
class ParameterDescription(Message):
    type_byte: ClassVar[bytes] = b"t"
    type_oids: tuple[int, ...]

    def _body(self) -> bytes:
        oids = self.type_oids
        return U16.pack(len(oids)) + struct.pack(f"!{len(oids)}I", *oids)

    @classmethod
    def read(cls, r: Reader) -> ParameterDescription:
        return cls(r.oids())


@dataclass(frozen=True, slots=True)
class EmptyQueryResponse(Message):
    type_byte: ClassVar[bytes] = b"I"


@dataclass(frozen=True, slots=True)
class ParseComplete(Message):
    type_byte: ClassVar[bytes] = b"1"


@dataclass(frozen=True, slots=True)
class BindComplete(Message):
    type_byte: ClassVar[bytes] = b"2"


@dataclass(frozen=True, slots=True)
class CloseComplete(Message):
    type_byte: ClassVar[bytes] = b"3"


@dataclass(frozen=True, slots=True)
class NoData(Message):
    type_byte: ClassVar[bytes] = b"n"


@dataclass(frozen=True, slots=True)
class PortalSuspended(Message):
    type_byte: ClassVar[bytes] = b"s"


BACKEND_TYPES: dict[int, type[Message]] = {
    c.type_byte[0]: c
    for c in (BackendKeyData, ParameterStatus, ReadyForQuery, NegotiateProtocolVersion)
    + (NotificationResponse, ErrorResponse, NoticeResponse, RowDescription, DataRow)
    + (CommandComplete, ParameterDescription, EmptyQueryResponse, ParseComplete)
    + (BindComplete, CloseComplete, NoData, PortalSuspended, CopyData, CopyDone)
}
# Real backend types we pass through undecoded: CopyIn/Out/BothResponse, FunctionCallResponse.
RAW_BACKEND_TYPES = frozenset(b"GHWV")
_R, _D = ord("R"), ord("D")


def decode_backend(type_byte: int, body: bytes) -> Message:
    """Decode one backend message; DataRow keeps its body unsplit."""
    if type_byte == _D:  # most messages of a result set: no Reader, no checks
        return DataRow.raw(body)
    if type_byte == _R:
        code = U32.unpack_from(body)[0] if len(body) >= 4 else None
        cls = AUTH_TYPES.get(code)  # type: ignore[arg-type]
        if cls is None:
            raise RemoteProtocolError(f"unsupported authentication request {code}")
        return decode_with(cls, body)
    cls2 = BACKEND_TYPES.get(type_byte)
    if cls2 is not None:
        return decode_with(cls2, body)
    if type_byte in RAW_BACKEND_TYPES:
        return RawMessage(bytes((type_byte,)), body)
    raise RemoteProtocolError(f"invalid backend message type {chr(type_byte)!r}")
