"""columns_from_model: pydantic field types become Postgres columns."""

import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Literal, Optional

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.resources import columns_from_model, pg_type_for


class Inner(BaseModel):
    x: int


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Everything(BaseModel):
    n: int
    f: float
    b: bool
    s: str
    ts: dt.datetime
    d: dt.date
    dec: Decimal
    u: uuid.UUID
    inner: Inner
    tags: list[str]
    meta: dict[str, int]
    mode: Literal["a", "b"]
    color: Color


def _types(model):
    return {c.name: c.pg_type for c in columns_from_model(model)}


def test_each_python_type_maps_to_its_postgres_type():
    assert _types(Everything) == {
        "n": "bigint",
        "f": "double precision",
        "b": "boolean",
        "s": "text",
        "ts": "timestamp with time zone",
        "d": "date",
        "dec": "numeric",
        "u": "uuid",
        "inner": "jsonb",
        "tags": "jsonb",
        "meta": "jsonb",
        "mode": "text",
        "color": "text",
    }


def test_columns_follow_the_model_field_order():
    assert [c.name for c in columns_from_model(Everything)] == list(Everything.model_fields)


@pytest.mark.parametrize(("annotation", "pg_type"), [
    (bool, "boolean"),  # a bool is an int: it must not become bigint
    (int, "bigint"),
    (dt.datetime, "timestamp with time zone"),  # a datetime is a date
    (dt.date, "date"),
    (Optional[int], "bigint"),  # noqa: UP045 - the spelling under test
    (int | None, "bigint"),
    (Literal["x", "y"] | None, "text"),
    (list[int], "jsonb"),
    (dict[str, str], "jsonb"),
    (int | str, "jsonb"),
])
def test_pg_type_for(annotation, pg_type):
    assert pg_type_for(annotation) == pg_type


def test_optional_is_unwrapped_and_nullable():
    class M(BaseModel):
        when: dt.date | None
        count: Optional[int] = None  # noqa: UP045 - the spelling under test

    cols = {c.name: c for c in columns_from_model(M)}
    assert (cols["when"].pg_type, cols["when"].nullable) == ("date", True)
    assert (cols["count"].pg_type, cols["count"].nullable) == ("bigint", True)


def test_required_fields_are_not_nullable_and_defaulted_ones_are():
    class M(BaseModel):
        a: int
        b: int = 3

    cols = {c.name: c for c in columns_from_model(M)}
    assert cols["a"].nullable is False
    assert cols["b"].nullable is True


def test_field_description_becomes_the_column_description():
    class M(BaseModel):
        number: int = Field(description="PR number")
        title: str

    cols = {c.name: c for c in columns_from_model(M)}
    assert cols["number"].description == "PR number"
    assert cols["title"].description == ""


def test_literal_lists_its_values_in_the_description():
    class M(BaseModel):
        status: Literal["todo", "done"] = Field(description="Progress")
        bare: Literal["a", "b"]

    cols = {c.name: c for c in columns_from_model(M)}
    assert cols["status"].description == "Progress (one of: todo, done)"
    assert cols["bare"].description == "one of: a, b"


def test_enum_lists_its_values_in_the_description():
    class M(BaseModel):
        color: Color | None = None

    (col,) = columns_from_model(M)
    assert col.pg_type == "text"
    assert col.description == "one of: red, green"


def test_pg_type_in_json_schema_extra_forces_the_type():
    class M(BaseModel):
        body: str = Field(json_schema_extra={"pg_type": "jsonb"})
        score: float | None = Field(default=None, json_schema_extra={"pg_type": "real"})

    assert _types(M) == {"body": "jsonb", "score": "real"}


def test_an_alias_names_the_column():
    class M(BaseModel):
        to: str = Field(alias="to_addr")

    assert [c.name for c in columns_from_model(M)] == ["to_addr"]


def test_a_column_converts_values_to_its_python_type():
    class M(BaseModel):
        d: dt.date

    (col,) = columns_from_model(M)
    assert col.convert("2024-05-01") == dt.date(2024, 5, 1)
