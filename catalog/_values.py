"""Python values to and from Postgres' text format, for the Python API only.

The wire never passes through here: a client's parameters and rows travel as
the bytes Postgres and the client wrote. The Python API (and the interpreter's
own reads of computed rows) need Python values, so this module keeps one small
table of text decoders by type OID; a type not in it comes back as ``str``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import struct
import uuid
from collections.abc import Callable
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.wire import DataRow, Param

__all__ = ["decode_row", "decode_value", "encode_param", "result_format"]


def encode_param(value: Any) -> Param:
    """A Python value as a text-format parameter whose type Postgres infers; a float or a
    Decimal keeps its own type (float8, numeric), so that ``age > $1`` with 39.5 compares
    39.5, as psycopg's does, rather than failing to read it as the column's integer."""
    if type(value) is str:  # the most frequent (a column of rows, a setting): tested first
        return _text_param(value)
    if isinstance(value, Param):
        return value
    if value is None:
        return Param(None)
    if isinstance(value, float | decimal.Decimal) and not isinstance(value, bool):
        oid = 701 if isinstance(value, float) else 1700
        text = repr(value) if isinstance(value, float) else str(value)
        return Param({"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}.get(
            text, text).encode(), 0, oid)
    if isinstance(value, bool):
        text = "t" if value else "f"
    elif isinstance(value, dt.datetime | dt.date | dt.time):
        text = value.isoformat()
    elif isinstance(value, bytes | bytearray | memoryview):
        text = "\\x" + bytes(value).hex()
    elif isinstance(value, dict | list):
        text = json.dumps(value)
    elif isinstance(value, dt.timedelta):
        text = f"{value.days} days {value.seconds} seconds {value.microseconds} microseconds"
    else:
        text = str(value)
    return _text_param(text)


def _text_param(text: str) -> Param:
    try:
        return Param(text.encode())
    except UnicodeEncodeError as exc:  # a lone surrogate: Python holds it, UTF-8 cannot
        raise errors.CharacterNotInRepertoire(
            f'invalid byte sequence for encoding "UTF8": {exc.reason} '
            f"{text[exc.start:exc.end]!a}",
            hint="A value (perhaps a row a tool returned) holds a character that is not "
            "valid Unicode text.") from None


def _bool(s: str) -> bool:
    return s == "t"


def _timestamp(s: str) -> Any:
    try:
        return dt.datetime.fromisoformat(s)
    except ValueError:
        return s  # infinity, BC dates, non-ISO DateStyle: keep Postgres' text


def _date(s: str) -> Any:
    try:
        return dt.date.fromisoformat(s)
    except ValueError:
        return s


def _time(s: str) -> Any:
    try:
        return dt.time.fromisoformat(s)
    except ValueError:
        return s


def _bytea(s: str) -> bytes | str:
    return bytes.fromhex(s[2:]) if s.startswith("\\x") else s


def _float(s: str) -> float:
    return float(s)


def _array(element: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(s: str) -> Any:
        return _parse_array(s, element)

    return parse


def _parse_array(s: str, element: Callable[[str], Any]) -> Any:
    """A one- or more-dimensional array literal, as nested lists."""
    if s.startswith("["):  # explicit bounds: "[0:1]={…}"
        s = s[s.index("=") + 1:]
    pos = 0

    def parse_list() -> list[Any]:
        nonlocal pos
        assert s[pos] == "{"
        pos += 1
        out: list[Any] = []
        if s[pos] == "}":
            pos += 1
            return out
        while True:
            if s[pos] == "{":
                out.append(parse_list())
            elif s[pos] == '"':
                pos += 1
                buf = []
                while s[pos] != '"':
                    if s[pos] == "\\":
                        pos += 1
                    buf.append(s[pos])
                    pos += 1
                pos += 1
                out.append(element("".join(buf)))
            else:
                end = pos
                while s[end] not in ",}":
                    end += 1
                token = s[pos:end]
                out.append(None if token == "NULL" else element(token))
                pos = end
            if s[pos] == ",":
                pos += 1
                continue
            pos += 1  # "}"
            return out

    return parse_list()


DECODERS: dict[int, Callable[[str], Any]] = {
    16: _bool,
    17: _bytea,
    20: int, 21: int, 23: int, 26: int,
    114: json.loads, 3802: json.loads,
    700: _float, 701: _float,
    1700: decimal.Decimal,
    1082: _date,
    1083: _time,
    1114: _timestamp, 1184: _timestamp,
    2950: uuid.UUID,
}
# Arrays of the types above: (array OID, element OID).
for _array_oid, _element_oid in ((1000, 16), (1005, 21), (1007, 23), (1016, 20), (1009, 25),
                                 (1015, 25), (1021, 700), (1022, 701), (1231, 1700),
                                 (1182, 1082), (1185, 1184), (2951, 2950), (3807, 3802)):
    DECODERS[_array_oid] = _array(DECODERS.get(_element_oid, str))


# -- the binary format: for values the interpreter reads itself ----------------------
# Text output depends on the client's DateStyle, IntervalStyle, TimeZone,
# extra_float_digits and bytea_output; binary output depends on none of them. So
# the values the interpreter hands to resolvers (pushed-down WHERE values, the rows
# of INSERT/UPDATE/DELETE) are read in binary wherever a decoder below exists.

_PG_EPOCH = dt.datetime(2000, 1, 1)
_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_I16, _I32, _I64 = struct.Struct("!h"), struct.Struct("!i"), struct.Struct("!q")
_NUMERIC_HEAD = struct.Struct("!hhHh")
_NUMERIC_SPECIAL = {0xC000: "NaN", 0xD000: "Infinity", 0xF000: "-Infinity"}


def _b_timestamp(raw: bytes, tz: dt.tzinfo | None = None) -> Any:
    us = _I64.unpack(raw)[0]
    try:
        value = _PG_EPOCH + dt.timedelta(microseconds=us)
    except OverflowError:  # infinity, BC, or past year 9999: no datetime holds it
        return "infinity" if us == 2**63 - 1 else "-infinity" if us == -(2**63) else (
            f"out of range: {us} microseconds from 2000-01-01")
    return value.replace(tzinfo=tz) if tz else value


def _b_date(raw: bytes) -> Any:
    days = _I32.unpack(raw)[0]
    try:
        return _PG_EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        return "infinity" if days == 2**31 - 1 else "-infinity" if days == -(2**31) else (
            f"out of range: {days} days from 2000-01-01")


def _b_time(raw: bytes) -> Any:
    us = _I64.unpack(raw)[0]
    if us >= 86_400_000_000:
        return "24:00:00"  # Postgres allows it; datetime.time does not
    seconds, us = divmod(us, 1_000_000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, us)


def _b_interval(raw: bytes) -> Any:
    us, days, months = struct.unpack("!qii", raw)
    if months:  # a month has no fixed length: no timedelta holds it
        return f"{months} mons {days} days {us} microseconds"
    return dt.timedelta(days=days, microseconds=us)


def _b_numeric(raw: bytes) -> decimal.Decimal:
    ndigits, weight, sign, dscale = _NUMERIC_HEAD.unpack_from(raw)
    if sign in _NUMERIC_SPECIAL:
        return decimal.Decimal(_NUMERIC_SPECIAL[sign])
    digits = struct.unpack_from(f"!{ndigits}H", raw, 8)
    text = "".join(f"{d:04d}" for d in digits) or "0"
    # The digits are base-10000 groups; the first one's weight is ``weight``.
    exponent = (weight + 1 - ndigits) * 4
    value = decimal.Decimal(f"{'-' if sign == 0x4000 else ''}{text}E{exponent}")
    precision = len(text) + max(exponent, 0) + dscale + 1
    return value.quantize(decimal.Decimal(1).scaleb(-dscale),
                          context=decimal.Context(prec=precision, Emin=-(10**9), Emax=10**9))


BINARY_DECODERS: dict[int, Callable[[bytes], Any]] = {
    16: lambda raw: raw == b"\x01",
    17: bytes,
    20: lambda raw: _I64.unpack(raw)[0],
    21: lambda raw: _I16.unpack(raw)[0],
    23: lambda raw: _I32.unpack(raw)[0],
    701: lambda raw: struct.unpack("!d", raw)[0],
    1082: _b_date,
    1083: _b_time,
    1114: _b_timestamp,
    1184: lambda raw: _b_timestamp(raw, dt.UTC),
    1186: _b_interval,
    1700: _b_numeric,
    2950: lambda raw: uuid.UUID(bytes=raw),
}
# The same types by the names a column's pg_type may use (typmods dropped).
_BINARY_NAMES = frozenset((
    "boolean", "bool", "bytea", "bigint", "int8", "smallint", "int2", "integer", "int", "int4",
    "double precision", "float8", "date", "time", "time without time zone", "timestamp",
    "timestamp without time zone", "timestamptz", "timestamp with time zone", "interval",
    "numeric", "decimal", "uuid"))


def result_format(pg_type: str) -> int:
    """The format to read a column of this type in when the interpreter decodes it."""
    name = " ".join(re.sub(r"\([^)]*\)", "", pg_type).lower().split())
    return 1 if name in _BINARY_NAMES else 0


def decode_value(oid: int, raw: bytes | None, format: int = 0) -> Any:
    if raw is None:
        return None
    if format == 1:
        binary = BINARY_DECODERS.get(oid)
        return binary(raw) if binary is not None else raw
    text = raw.decode()
    decoder = DECODERS.get(oid)
    return decoder(text) if decoder is not None else text


def decode_row(oids: tuple[int, ...], row: DataRow,
               formats: tuple[int, ...] = ()) -> tuple[Any, ...]:
    if not formats or not any(formats):
        return tuple(decode_value(oid, raw) for oid, raw in zip(oids, row.values, strict=True))
    return tuple(decode_value(oid, raw, fmt)
                 for oid, raw, fmt in zip(oids, row.values, formats, strict=True))
