"""A value an upstream sent as JSON, as the value of its column (``resources/_json.py``): it
passes when the column's type takes it, as sent; anything else is 38000 naming the source,
the field, what it sent and the column's type, never converted silently."""

from __future__ import annotations

import datetime as dt

import pytest

from glove_scratchpad import errors
from glove_scratchpad.resources._json import json_value


@pytest.mark.parametrize(("value", "pg_type", "taken"), [
    (True, "boolean", True),
    (12.0, "bigint", 12),
    (12, "double precision", 12),
    (7, "text", "7"),
    ("2024-05-01T12:00:00Z", "timestamptz", dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC)),
    ({"a": [1]}, "jsonb", {"a": [1]}),
    (None, "bigint", None),
])
def test_a_value_its_column_takes_passes(value, pg_type, taken):
    assert json_value(value, pg_type, source="API 'gh'", field="f") == taken


@pytest.mark.parametrize(("value", "pg_type"), [
    ("yes", "boolean"), (True, "bigint"), (" 12 ", "bigint"), (1714564800, "timestamptz"),
    ({"a": 1}, "text"),
])
def test_anything_else_is_38000_naming_where_it_came_from(value, pg_type):
    with pytest.raises(errors.ExternalRoutineError) as info:
        json_value(value, pg_type, source="API 'gh'", field="done")
    assert info.value.sqlstate == "38000"
    message = info.value.message
    assert "API 'gh'" in message and "done" in message and pg_type in message, message
