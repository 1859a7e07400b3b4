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
import uuid
from collections.abc import Callable
from typing import Any

from .runner import Param
from .wire import DataRow

__all__ = ["decode_row", "decode_value", "encode_param"]


def encode_param(value: Any) -> Param:
    """A Python value as a text-format parameter whose type Postgres infers."""
    if isinstance(value, Param):
        return value
    if value is None:
        return Param(None)
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
    return Param(text.encode())


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


def decode_value(oid: int, raw: bytes | None) -> Any:
    if raw is None:
        return None
    text = raw.decode()
    decoder = DECODERS.get(oid)
    return decoder(text) if decoder is not None else text


def decode_row(oids: tuple[int, ...], row: DataRow) -> tuple[Any, ...]:
    return tuple(decode_value(oid, raw) for oid, raw in zip(oids, row.values, strict=True))
