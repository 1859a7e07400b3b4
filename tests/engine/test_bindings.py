"""Which pushed-down values the server converts itself, and which Postgres must: the
fast path and the full path agree, and a binary parameter is read in Python only when
its cast to the column's type changes nothing."""

from __future__ import annotations

import struct
import uuid

import pytest

from glove_scratchpad.resources import Column
from glove_scratchpad.server.engine.bindings import converted
from glove_scratchpad.server.sql.nodes import Value
from glove_scratchpad.wire import Param

BIGINT = Column("id", "bigint", py_type=int)
SMALLINT = Column("n", "smallint", py_type=int)
TEXT = Column("name", "text", py_type=str)
FLOAT = Column("x", "double precision", py_type=float)
UUID = Column("u", "uuid", py_type=uuid.UUID)
PARAM = Value("$1", None, param=1)


def binary(oid: int, data: bytes) -> list[Param]:
    return [Param(data, 1, oid)]


@pytest.mark.parametrize(("params", "column", "want"), [
    (binary(21, struct.pack("!h", 7)), BIGINT, [7]),  # int2 into bigint: psycopg's small ints
    (binary(23, struct.pack("!i", -5)), BIGINT, [-5]),
    (binary(20, struct.pack("!q", 2**40)), BIGINT, [2**40]),
    (binary(25, "café".encode()), TEXT, ["café"]),
    (binary(701, struct.pack("!d", 2.5)), FLOAT, [2.5]),
    (binary(2950, uuid.UUID(int=1).bytes), UUID, [uuid.UUID(int=1)]),
    ([Param(None, 1, 20)], BIGINT, [None]),
    ([Param(b"42")], BIGINT, [42]),  # text
])
def test_a_value_whose_cast_changes_nothing_is_read_here(params, column, want):
    assert converted(PARAM, column, params) == want


@pytest.mark.parametrize(("params", "column"), [
    (binary(20, struct.pack("!q", 2**20)), SMALLINT),  # out of the column's range
    (binary(23, b"\x00\x01\x02"), BIGINT),  # malformed: Postgres says so
    (binary(701, struct.pack("!d", 3.0)), BIGINT),  # a float for an integer: Postgres casts
    (binary(1700, b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x07"), BIGINT),  # numeric
    (binary(25, b"7"), BIGINT),  # binary text for an integer column
    (binary(0, struct.pack("!q", 7)), BIGINT),  # type left open
    ([Param(b"seven")], BIGINT),  # text the column refuses: Postgres words the error
])
def test_any_other_value_is_left_to_postgres(params, column):
    assert converted(PARAM, column, params) is None
