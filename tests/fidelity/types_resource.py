"""One resource holding every type of the mapping, and the same values as SQL literals.

Each column has a list of (Python value, typed SQL literal) pairs. Row ``k``
(id ``k + 1``) holds the ``k``-th value of every column that has one, NULL in
the others; the last row is NULL everywhere but its id. The resource serves
the Python values through its resolver; the oracle is a real table filled from
the literals on a direct connection to the sidecar.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Resource, define_resource

UTC = dt.UTC


def tz(hours: int = 0, minutes: int = 0, seconds: int = 0) -> dt.timezone:
    sign = -1 if hours < 0 or minutes < 0 else 1
    return dt.timezone(sign * dt.timedelta(hours=abs(hours), minutes=abs(minutes),
                                           seconds=seconds))


class Leaf(BaseModel):
    k: str
    v: float | None = None


class Nested(BaseModel):
    name: str
    tags: list[str] = []
    leaf: Leaf | None = None
    extra: dict[str, Any] = {}


class Color(StrEnum):
    RED = "red"
    QUOTE = "it's \"q\""
    EMOJI = "😀 e\u0301"


class Plain(Enum):  # not a str subclass: its value must still reach the sidecar
    ALPHA = "alpha"
    BETA = "béta 'b'"


Lit = Literal["open", "it's", 'say "x"', "ünï😀", "", "back\\slash"]

NumericAny = Annotated[Decimal, Field(allow_inf_nan=True)]


class Typed(BaseModel):
    id: int
    i8: int | None = None
    f8: float | None = None
    bo: bool | None = None
    tx: str | None = None
    ts: dt.datetime | None = None
    d: dt.date | None = None
    n: NumericAny | None = None
    u: uuid.UUID | None = None
    jm: Nested | None = None
    jl: list[Any] | None = None
    jd: dict[str, Any] | None = None
    ja: Any = None  # jsonb of any JSON value, scalars too
    lit: Lit | None = None
    en: Color | None = None
    ep: Plain | None = None
    tm: dt.time | None = None
    iv: dt.timedelta | None = None
    by: bytes | None = None


# The SQL type each column must get from the mapping (format_type spelling).
SQL_TYPES = {
    "id": "bigint", "i8": "bigint", "f8": "double precision", "bo": "boolean", "tx": "text",
    "ts": "timestamp with time zone", "d": "date", "n": "numeric", "u": "uuid",
    "jm": "jsonb", "jl": "jsonb", "jd": "jsonb", "ja": "jsonb",
    "lit": "text", "en": "text", "ep": "text",
    "tm": "time without time zone", "iv": "interval", "by": "bytea",
}
COLUMNS = list(SQL_TYPES)


def lit(text: str, typ: str) -> str:
    return "'" + text.replace("'", "''") + "'::" + typ


def _deep_list(depth: int) -> Any:
    v: Any = ["bottom", 1.5, None]
    for i in range(depth):
        v = [i, v]
    return v


def _deep_dict(depth: int) -> Any:
    v: Any = {"leaf": "ünï", "n": 2**80}
    for i in range(depth):
        v = {f"k{i % 7}é": v, "i": i}
    return v


LONG_NUMERIC = "1234567890" * 200 + "." + "0987654321" * 200
HUGE_INT_NUMERIC = "9" * 20000

# (python value, typed SQL literal) per column.
VALUES: dict[str, list[tuple[Any, str]]] = {
    "i8": [(v, lit(str(v), "bigint")) for v in
           (0, 1, -1, 2**63 - 1, -(2**63), 42, 1234567890123)],
    "f8": [
        (0.0, "'0'::float8"), (-0.0, "'-0'::float8"), (1.5, "'1.5'::float8"),
        (math.inf, "'Infinity'::float8"), (-math.inf, "'-Infinity'::float8"),
        (math.nan, "'NaN'::float8"), (1e308, "'1e308'::float8"), (5e-324, "'5e-324'::float8"),
        (2.2250738585072014e-308, "'2.2250738585072014e-308'::float8"),
        (0.1, "'0.1'::float8"), (1 / 3, "'0.3333333333333333'::float8"),
        (1.7976931348623157e308, "'1.7976931348623157e308'::float8"),
        (-1.2345678901234567e-300, "'-1.2345678901234567e-300'::float8"),
        (123456789.12345679, "'123456789.12345679'::float8"), (100.0, "'100'::float8"),
        (1e16, "'10000000000000000'::float8"), (2.0**53 + 2, "'9007199254740994'::float8"),
    ],
    "bo": [(True, "true"), (False, "false")],
    "tx": [(s, lit(s, "text")) for s in (
        "", "it's", 'say "hi"', "back\\slash \\\\ double \\x41 \\n", "mixed '\"\\",
        "emoji 😀👍🏽🇫🇷👨‍👩‍👧", "combining e\u0301 n\u0303 a\u030a \u0338",
        "日本語テキスト", "line\nbreak\ttab\rcr", "NULL", " lead and trail ",
        "\u2028\u2029\ufeff\uffff\U0010ffff", "x" * 100_000, '{"json": "like"}',
        "E'\\x41'", "\x01\x1f\x7f control", "$$dollar$$", "--comment /* c */",
    )],
    "ts": [
        (dt.datetime(1, 1, 1, tzinfo=UTC), "'0001-01-01 00:00:00+00'::timestamptz"),
        (dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
         "'9999-12-31 23:59:59.999999+00'::timestamptz"),
        (dt.datetime(2024, 2, 29, 12, 34, 56, 789012, tzinfo=tz(5, 30)),
         "'2024-02-29 12:34:56.789012+05:30'::timestamptz"),
        (dt.datetime(1970, 1, 1, tzinfo=UTC), "'epoch'::timestamptz"),
        (dt.datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=tz(-3, -30)),
         "'2000-01-01 00:00:00.000001-03:30'::timestamptz"),
        (dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=tz(14)),
         "'2038-01-19 03:14:08+14'::timestamptz"),
        (dt.datetime(1900, 1, 1, 12, 0, 0, tzinfo=tz(5, 53, 28)),
         "'1900-01-01 12:00:00+05:53:28'::timestamptz"),
        (dt.datetime(1935, 3, 30, 12, 0, tzinfo=ZoneInfo("America/St_Johns")),
         "'1935-03-30 12:00:00 America/St_Johns'::timestamptz"),
        (dt.datetime(2021, 3, 14, 2, 30, 0, 500000, tzinfo=ZoneInfo("Asia/Kolkata")),
         "'2021-03-14 02:30:00.5 Asia/Kolkata'::timestamptz"),
        # Naive: read in the session's TimeZone, like a literal without a zone.
        (dt.datetime(2021, 6, 15, 8, 30, 0, 250), "'2021-06-15 08:30:00.00025'::timestamptz"),
        (dt.datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=tz(-14)),
         "'0001-01-01 00:00:00.000001-14'::timestamptz"),
    ],
    "d": [(d, lit(d.isoformat(), "date")) for d in (
        dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2000, 2, 29), dt.date(1970, 1, 1),
        dt.date(2024, 12, 31), dt.date(2024, 1, 2), dt.date(1582, 10, 10))],
    "n": [(Decimal(s), lit(s, "numeric")) for s in (
        "0", "-0", "1.10", "-1.10", "0.000001", "1E+30", "1.000E-20", LONG_NUMERIC,
        "-" + LONG_NUMERIC, "NaN", "Infinity", "-Infinity", "1E+1000", "1E-1000",
        "123456789012345678901234567890.000000000000000000000000000001", HUGE_INT_NUMERIC,
        "-0.00000", "9223372036854775808", "3.14159265358979323846264338327950288419716939937510",
    )],
    "u": [
        (uuid.UUID(int=0), "'00000000-0000-0000-0000-000000000000'::uuid"),
        (uuid.UUID(int=2**128 - 1), "'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'::uuid"),
        (uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
         "'{a0eebc999c0b4ef8bb6d6bb9bd380a11}'::uuid"),
    ],
    "jm": [
        (Nested(name="plain"), """'{"name":"plain","tags":[],"leaf":null,"extra":{}}'::jsonb"""),
        (Nested(name="ünïcødé 😀 \"q\" 'a' \\ e\u0301", tags=["a", "", '"', "\\", "\n"],
                leaf=Leaf(k="κλειδί", v=1e308),
                extra={"日本": {"deep": [1, 2.5, -0.0, 5e-324, 0.1, 1e-07]}, "big": 2**100,
                       "neg": -(2**70), "": "", "null": None, "t": True, "f": False}),
         lit(json.dumps({"name": "ünïcødé 😀 \"q\" 'a' \\ e\u0301",
                         "tags": ["a", "", '"', "\\", "\n"],
                         "leaf": {"k": "κλειδί", "v": 1e308},
                         "extra": {"日本": {"deep": [1, 2.5, -0.0, 5e-324, 0.1, 1e-07]},
                                   "big": 2**100, "neg": -(2**70), "": "", "null": None,
                                   "t": True, "f": False}}), "jsonb")),
    ],
    "jl": [
        ([], "'[]'::jsonb"),
        ([1, "two", 3.0, None, True, False, {"a": []}],
         """'[1, "two", 3.0, null, true, false, {"a": []}]'::jsonb"""),
        (_deep_list(200), lit(json.dumps(_deep_list(200)), "jsonb")),
        ([2**64, -(2**63) - 1, 10**40, 1.7976931348623157e308, 0.1, 123456789012345678,
          3.141592653589793, 1e-300],
         "'[18446744073709551616, -9223372036854775809, 10000000000000000000000000000000000000000,"
         " 1.7976931348623157e+308, 0.1, 123456789012345678, 3.141592653589793, 1e-300]'::jsonb"),
    ],
    "jd": [
        ({}, "'{}'::jsonb"),
        ({"key with 'quote'": 'val "dq"', "back\\slash": "\\", "emoji😀": "👍🏽",
          "e\u0301": "combining", "nested": {"list": [{"x": None}]}, "tab\t": "\n\u2028",
          "z": 1, "a": 2, "ключ": "значение"},
         lit(json.dumps({"key with 'quote'": 'val "dq"', "back\\slash": "\\", "emoji😀": "👍🏽",
                         "e\u0301": "combining", "nested": {"list": [{"x": None}]},
                         "tab\t": "\n\u2028", "z": 1, "a": 2, "ключ": "значение"}), "jsonb")),
        (_deep_dict(150), lit(json.dumps(_deep_dict(150)), "jsonb")),
        ({"pi": 3.141592653589793, "int": 12345678901234567890123456789, "e": 2.718281828459045,
          "tiny": 5e-324, "neg0": -0.0},
         """'{"pi": 3.141592653589793, "int": 12345678901234567890123456789,
              "e": 2.718281828459045, "tiny": 5e-324, "neg0": -0.0}'::jsonb"""),
    ],
    "ja": [
        ("just a string", """'"just a string"'::jsonb"""),
        ({"a": 1}, """'{"a": 1}'::jsonb"""),
        (12345678901234567890, "'12345678901234567890'::jsonb"),
        (True, "'true'::jsonb"),
        ("it's \"q\" \\ 😀", lit(json.dumps("it's \"q\" \\ 😀"), "jsonb")),
        ("", """'""'::jsonb"""),
        ([None], "'[null]'::jsonb"),
        (-0.5, "'-0.5'::jsonb"),
    ],
    "lit": [(v, lit(v, "text")) for v in ("open", "it's", 'say "x"', "ünï😀", "", "back\\slash")],
    "en": [(c, lit(c.value, "text")) for c in Color],
    "ep": [(p, lit(p.value, "text")) for p in Plain],
    "tm": [
        (dt.time(0, 0), "'00:00'::time"),
        (dt.time(23, 59, 59, 999999), "'23:59:59.999999'::time"),
        (dt.time(12, 34, 56, 789), "'12:34:56.000789'::time"),
        (dt.time(1, 2, 3), "'01:02:03'::time"),
    ],
    "iv": [
        (dt.timedelta(0), "'0'::interval"),
        (dt.timedelta(days=1), "'1 day'::interval"),
        (dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=5),
         "'1 day 02:03:04.000005'::interval"),
        (dt.timedelta(hours=25), "'1 day 01:00:00'::interval"),
        (dt.timedelta(microseconds=1), "'0.000001 seconds'::interval"),
        # Python normalises a negative timedelta to -days + positive seconds; that is
        # the value it holds, and the one Postgres gets (as psycopg and asyncpg send it).
        (dt.timedelta(seconds=-1), "'-1 days +23:59:59'::interval"),
        (dt.timedelta(days=-3, microseconds=7), "'-3 days +00:00:00.000007'::interval"),
        (dt.timedelta.max, "'999999999 days 23:59:59.999999'::interval"),
        (dt.timedelta.min, "'-999999999 days'::interval"),
    ],
    "by": [(b, f"decode('{b.hex()}', 'hex')") for b in (
        b"", b"\x00", bytes(range(256)), b"'\"\\", "é😀".encode(), b"\\x41")],
}

NROWS = max(len(v) for v in VALUES.values()) + 1  # the last row: NULLs only


def python_rows() -> list[dict[str, Any]]:
    rows = []
    for k in range(NROWS):
        row: dict[str, Any] = {"id": k + 1}
        for col, vals in VALUES.items():
            if k < len(vals):
                row[col] = vals[k][0]
        rows.append(row)
    return rows


def oracle_sql(table: str) -> list[str]:
    """CREATE and INSERT statements for a real table holding the same values."""
    cols = ", ".join(f"{c} {t}" for c, t in SQL_TYPES.items())
    out = [f"CREATE TEMPORARY TABLE {table} ({cols})"]
    for k in range(NROWS):
        values = [str(k + 1)] + [
            VALUES[c][k][1] if k < len(VALUES[c]) else "NULL" for c in COLUMNS[1:]]
        out.append(f"INSERT INTO {table} ({', '.join(COLUMNS)}) VALUES ({', '.join(values)})")
    return out


def typed_resource() -> Resource:
    return define_resource("typed", schema=Typed, primary_key=["id"], volatility="immutable",
                           description="Every type of the mapping, with extreme values",
                           select=lambda b: [Typed(**r) for r in python_rows()])


# -- values that travel the other way: from Postgres into Python -----------------------

# What the resolvers of ``echo`` and ``sink`` were given, newest last.
RECEIVED: dict[str, list[Any]] = {"echo": [], "sink": []}


def _echo(b: Any) -> list[Typed]:
    """One row holding exactly the values the WHERE clause bound."""
    got = {c: b.one(c) for c in COLUMNS if b.has(c)}
    RECEIVED["echo"].append(got)
    return [Typed(**{"id": 0, **got})]


def _sink(rows: list[Typed]) -> list[Typed]:
    RECEIVED["sink"].extend(rows)
    return rows


def round_trip_resources() -> list[Resource]:
    return [
        define_resource("echo", schema=Typed, volatility="volatile", filters=COLUMNS,
                        description="Returns the bound WHERE values as its row", select=_echo),
        define_resource("sink", schema=Typed, volatility="volatile",
                        description="Records inserted rows", insert=_sink),
        odd_resource(),
    ]


class Odd(BaseModel):
    kind: str
    tx: str | None = None
    jd: dict[str, Any] | None = None
    i8: int | None = None


# Python values Postgres cannot hold in these columns.
UNREPRESENTABLE: dict[str, dict[str, Any]] = {
    "nul in text": {"tx": "a\x00b"},
    "lone surrogate": {"tx": "\ud800"},
    "nan in jsonb": {"jd": {"x": math.nan}},
    "infinity in jsonb": {"jd": {"x": [math.inf]}},
    "nul in jsonb": {"jd": {"x": "a\x00b"}},
    "int beyond bigint": {"i8": 2**63},
}


def odd_resource() -> Resource:
    return define_resource(
        "odd", schema=Odd, keys=["kind"], volatility="volatile",
        description="Values Postgres cannot hold",
        select=lambda b: [Odd(kind=b.one("kind"), **UNREPRESENTABLE[b.one("kind")])])
