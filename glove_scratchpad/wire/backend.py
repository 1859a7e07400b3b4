"""Backend (server -> client) messages, plus RawMessage for pre-encoded bytes.

Rules:
- Same shape as frontend.py: frozen, slotted dataclasses named as in the
  PostgreSQL docs, each with its wire ``layout``.
- The 'R' family is told apart by its Int32 code (the ``prefix``); codes we
  do not speak (Kerberos, GSSAPI, SSPI) are a RemoteProtocolError.
- DataRow is the one hand-written class: a relayed row keeps the body it
  arrived with (``raw_body``) and is split only if someone reads ``values``;
  re-encoding it is header + body. ``decode_backend`` does no work on it.
- RawMessage(type_byte, body) sends any pre-encoded message as-is; the
  client also yields it for real backend types we do not model (COPY
  responses, FunctionCallResponse), so a relay can pass them through.
- SSLResponse / GSSENCResponse are the single unframed byte that answers an
  encryption request.
- OIDs are unsigned Int32; type_size, column_attr and type_modifier signed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Self

from glove_scratchpad.errors import FIELD_CODES  # the one table of field codes

from ._codec import (
    BYTE,
    HEADER,
    INT32,
    OIDS,
    REST,
    STRING,
    STRINGS,
    U16,
    U32,
    Field,
    Message,
    Reader,
    checked,
    cstr,
    decode_with,
    values_block,
)
from .errors import LocalProtocolError, RemoteProtocolError
from .frontend import CopyData, CopyDone

SECRET_KEY = checked(REST, lambda k: 4 <= len(k) <= 256, "secret key length")  # 3.0: 4 bytes
STATUS = checked(BYTE, lambda s: s in ("I", "T", "E"), "transaction status")
SALT = checked(Field(bytes, lambda r: r.take(4)), lambda s: len(s) == 4, "MD5 salt")
COUNTED_STRINGS = Field(  # Int32 count, then that many Strings
    lambda v: INT32.encode(len(v)) + b"".join(map(cstr, v)),
    lambda r: tuple(r.string() for _ in range(r.count32())),
)


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
    """The answer to SSLRequest: b'S' (start TLS now) or b'N'."""

    accepted: bool

    def encode(self) -> bytes:
        return b"S" if self.accepted else b"N"


@dataclass(frozen=True, slots=True)
class GSSENCResponse(Message):
    """The answer to GSSENCRequest: b'G' (start GSSAPI encryption now) or b'N'."""

    accepted: bool

    def encode(self) -> bytes:
        return b"G" if self.accepted else b"N"


# --- authentication: 'R' + Int32 code -------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthenticationOk(Message):
    type_byte, prefix = b"R", INT32.encode(0)


@dataclass(frozen=True, slots=True)
class AuthenticationCleartextPassword(Message):
    type_byte, prefix = b"R", INT32.encode(3)


@dataclass(frozen=True, slots=True)
class AuthenticationMD5Password(Message):
    type_byte, prefix, layout = b"R", INT32.encode(5), (SALT,)
    salt: bytes


@dataclass(frozen=True, slots=True)
class AuthenticationSASL(Message):
    type_byte, prefix, layout = b"R", INT32.encode(10), (STRINGS,)
    mechanisms: tuple[str, ...]  # in the server's order of preference


@dataclass(frozen=True, slots=True)
class AuthenticationSASLContinue(Message):
    type_byte, prefix, layout = b"R", INT32.encode(11), (REST,)
    data: bytes


@dataclass(frozen=True, slots=True)
class AuthenticationSASLFinal(Message):
    type_byte, prefix, layout = b"R", INT32.encode(12), (REST,)
    data: bytes


AUTH_TYPES: dict[int, type[Message]] = {
    U32.unpack(c.prefix)[0]: c
    for c in (
        *(AuthenticationOk, AuthenticationCleartextPassword, AuthenticationMD5Password),
        *(AuthenticationSASL, AuthenticationSASLContinue, AuthenticationSASLFinal),
    )
}

# --- session status -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackendKeyData(Message):
    type_byte, layout = b"K", (INT32, SECRET_KEY)
    process_id: int
    secret_key: bytes  # 4 bytes for protocol 3.0 peers, 4..256 in 3.2


@dataclass(frozen=True, slots=True)
class ParameterStatus(Message):
    type_byte, layout = b"S", (STRING, STRING)
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class ReadyForQuery(Message, memo=True):
    type_byte, layout = b"Z", (STATUS,)
    status: str = "I"  # 'I' idle, 'T' in a transaction, 'E' in a failed transaction


@dataclass(frozen=True, slots=True)
class NegotiateProtocolVersion(Message):
    type_byte, layout = b"v", (INT32, COUNTED_STRINGS)
    newest_minor: int
    unrecognized_options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NotificationResponse(Message):
    type_byte, layout = b"A", (INT32, STRING, STRING)
    process_id: int
    channel: str
    payload: str


# --- errors and notices -------------------------------------------------------------

def _encode_fields(fields: dict[str, str]) -> bytes:
    if any(len(code) != 1 or code == "\0" for code in fields):
        raise LocalProtocolError(f"field codes must be one character: {list(fields)}")
    return b"".join([code.encode("latin-1") + cstr(text) for code, text in fields.items()]) + b"\0"


def _read_fields(r: Reader) -> dict[str, str]:
    return {code: r.string() for code in iter(r.byte, "\0")}  # a zero code ends the list


class _Notice(Message):
    """ErrorResponse and NoticeResponse: ``fields`` keyed by one-letter code."""

    __slots__ = ()
    layout = (Field(_encode_fields, _read_fields),)
    fields: dict[str, str]

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
    ) -> Self:
        """From keywords (see FIELD_CODES); V repeats S, as Postgres sends both."""
        named: dict[str, str | int | None]
        named = dict(severity=severity, severity_nonlocalized=severity, code=code)
        named |= dict(message=message, detail=detail, hint=hint, position=position)
        named |= other_fields
        if unknown := set(named) - set(FIELD_CODES):
            raise LocalProtocolError(f"unknown error fields: {sorted(unknown)}")
        fields = {FIELD_CODES[k]: str(v) for k, v in named.items() if v is not None}
        return cls(fields)  # type: ignore[call-arg]  # cls: ErrorResponse or NoticeResponse

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
class ErrorResponse(_Notice):
    type_byte = b"E"
    fields: dict[str, str]


@dataclass(frozen=True, slots=True)
class NoticeResponse(_Notice):
    type_byte = b"N"
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
    """e.g. ``error_response("ERROR", "42P01", 'relation "x" does not exist')``."""
    return ErrorResponse.build(severity, code, message, detail, hint, position, **other_fields)


# --- query results ------------------------------------------------------------------

_COLUMN = struct.Struct("!IhIhih")  # table OID, attnum, type OID, typlen, typmod, format


@dataclass(frozen=True, slots=True)
class FieldDescription:
    name: str
    table_oid: int = 0
    column_attr: int = 0
    type_oid: int = 25  # text
    type_size: int = -1  # -1 varlena, -2 cstring
    type_modifier: int = -1
    format: int = 0  # 0 text, 1 binary


def _encode_columns(cols: tuple[FieldDescription, ...]) -> bytes:
    parts = [U16.pack(len(cols))]
    for c in cols:
        parts.append(cstr(c.name))
        parts.append(
            _COLUMN.pack(
                c.table_oid, c.column_attr, c.type_oid, c.type_size, c.type_modifier, c.format
            )
        )
    return b"".join(parts)


def _read_columns(r: Reader) -> tuple[FieldDescription, ...]:
    return tuple(
        FieldDescription(r.string(), *_COLUMN.unpack(r.take(_COLUMN.size)))
        for _ in range(r.uint16())
    )


@dataclass(frozen=True, slots=True)
class RowDescription(Message, memo=True):
    type_byte, layout = b"T", (Field(_encode_columns, _read_columns),)
    fields: tuple[FieldDescription, ...]


def _split_row(body: bytes) -> tuple[bytes | None, ...]:
    """DataRow body -> values: a tight loop, as it runs once per row."""
    end = len(body)
    if end < 2:
        raise RemoteProtocolError("invalid DataRow message: truncated column count")
    out: list[bytes | None]
    pos, out, unpack = 2, [], struct.Struct("!i").unpack_from
    for _ in range(U16.unpack_from(body)[0]):
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


class DataRow(Message):
    """One row: ``DataRow(values)``, or ``DataRow.raw(body)`` for a relayed row.

    Immutable. ``values`` and ``raw_body`` are each derived from the other on
    first use; equality compares the encoded body.
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
        """The column values (None = NULL); RemoteProtocolError if the raw body is bad."""
        if self._values is None:
            object.__setattr__(self, "_values", _split_row(self._raw or b""))
        return self._values  # type: ignore[return-value]

    @property
    def raw_body(self) -> bytes:
        if self._raw is None:
            object.__setattr__(self, "_raw", values_block(self._values or ()))
        return self._raw  # type: ignore[return-value]

    def _body(self) -> bytes:
        return self.raw_body

    def encode(self) -> bytes:
        """The frame, as ``Message.encode`` makes it, in one step: every relayed row of
        a result is framed here, so a big result pays one call per row, not five."""
        body = self._raw
        if body is None:
            return self._encode()  # values to encode: their errors worded as any message's
        return HEADER.pack(b"D", len(body) + 4) + body

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
class CommandComplete(Message, memo=True):
    type_byte, layout = b"C", (STRING,)
    tag: str  # e.g. "SELECT 1", "INSERT 0 3"


@dataclass(frozen=True, slots=True)
class ParameterDescription(Message):
    type_byte, layout = b"t", (OIDS,)
    type_oids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EmptyQueryResponse(Message):
    type_byte = b"I"


@dataclass(frozen=True, slots=True)
class ParseComplete(Message, memo=True):
    type_byte = b"1"


@dataclass(frozen=True, slots=True)
class BindComplete(Message, memo=True):
    type_byte = b"2"


@dataclass(frozen=True, slots=True)
class CloseComplete(Message, memo=True):
    type_byte = b"3"


@dataclass(frozen=True, slots=True)
class NoData(Message, memo=True):
    type_byte = b"n"


@dataclass(frozen=True, slots=True)
class PortalSuspended(Message):
    type_byte = b"s"


BACKEND_TYPES: dict[int, type[Message]] = {
    c.type_byte[0]: c
    for c in (
        *(BackendKeyData, ParameterStatus, ReadyForQuery, NegotiateProtocolVersion),
        *(NotificationResponse, ErrorResponse, NoticeResponse, RowDescription, CommandComplete),
        *(ParameterDescription, EmptyQueryResponse, ParseComplete, BindComplete, CloseComplete),
        *(NoData, PortalSuspended, CopyData, CopyDone),
    )
}
RAW_BACKEND_TYPES = frozenset(b"GHWV")  # CopyIn/Out/BothResponse, FunctionCallResponse
_R, _D = ord("R"), ord("D")


def decode_backend(type_byte: int, body: bytes) -> Message:
    """Decode one backend message; a DataRow keeps its body unsplit."""
    if type_byte == _D:  # most messages of a result set: no Reader, no checks
        return DataRow.raw(body)
    if type_byte == _R:
        code = U32.unpack_from(body)[0] if len(body) >= 4 else None
        if (auth := AUTH_TYPES.get(code)) is None:  # type: ignore[arg-type]
            raise RemoteProtocolError(f"unsupported authentication request {code}")
        return decode_with(auth, body)
    if (cls := BACKEND_TYPES.get(type_byte)) is not None:
        return decode_with(cls, body)
    if type_byte in RAW_BACKEND_TYPES:
        return RawMessage(bytes((type_byte,)), body)
    raise RemoteProtocolError(f"invalid backend message type {chr(type_byte)!r}")
