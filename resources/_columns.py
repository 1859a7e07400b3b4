"""Columns, and the mapping from pydantic field types to Postgres types.

The mapping is a table, read top to bottom; the first matching Python type wins
(``bool`` before ``int``, since ``bool`` is an ``int``):

    bool -> boolean, int -> bigint, float -> double precision, str -> text,
    datetime -> timestamptz, date -> date, time -> time, timedelta -> interval,
    Decimal -> numeric, UUID -> uuid, bytes -> bytea,
    Literal/Enum -> text (the values go into the description),
    nested models, lists, dicts and anything else -> jsonb.

``json_schema_extra={"pg_type": ...}`` forces a type.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, Optional

from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

__all__ = ["Column", "columns_from_model", "pg_type_for"]

_TYPE_TABLE: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "bigint"),
    (float, "double precision"),
    (str, "text"),
    (dt.datetime, "timestamp with time zone"),
    (dt.date, "date"),
    (dt.time, "time without time zone"),
    (dt.timedelta, "interval"),
    (Decimal, "numeric"),
    (uuid.UUID, "uuid"),
    (bytes, "bytea"),
)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a resource: a tool argument, a result field, or both."""

    name: str
    pg_type: str = "text"
    description: str = ""
    py_type: Any = str
    nullable: bool = True
    adapter: TypeAdapter[Any] = field(default=None, compare=False, repr=False)  # type: ignore[arg-type]
    # list adapters, made on first use: by whether a NULL is let through whatever the type
    _lists: dict[bool, TypeAdapter[Any]] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.adapter is None:
            object.__setattr__(self, "adapter", TypeAdapter(self.py_type))

    def convert(self, value: Any) -> Any:
        """A bound value converted to this column's Python type."""
        return self.adapter.validate_python(value)

    def convert_many(self, values: list[Any]) -> list[Any]:
        """Values (None stays None) converted in one pass; an error's ``loc`` is the index."""
        return self._list(True).validate_python(values)

    def validate_many(self, values: list[Any]) -> list[Any]:
        """Values validated as a model validates its field of this type (None only where
        the type takes it), in one pass; an error's ``loc`` is the index."""
        return self._list(False).validate_python(values)

    def as_they_are(self, types: set[type]) -> bool:
        """Whether validation gives values of these types back as they are: the column
        takes anything, or each type is exactly its plain type (or None, where the
        type takes it)."""
        if self.py_type is Any:
            return True
        kept = _AS_THEY_ARE.get(self.py_type)
        return kept is not None and types <= kept

    def _list(self, none: bool) -> TypeAdapter[Any]:
        many = self._lists.get(none)
        if many is None:
            # Optional[], not "| None": py_type may be any annotation, not only a class.
            item = Optional[self.py_type] if none else self.py_type  # noqa: UP045
            many = self._lists[none] = TypeAdapter(list[item])  # type: ignore[valid-type]
        return many


# Python types whose instances pydantic gives back as they are (no conversion and no
# check: a plain annotation has no constraint), Optional ones with None too.
_PLAIN = (int, float, str, bool, bytes)
_AS_THEY_ARE: dict[Any, frozenset[type]] = {
    **{t: frozenset((t,)) for t in _PLAIN},
    # Optional[t] and t | None are equal keys: one entry serves both spellings.
    **{t | None: frozenset((t, type(None))) for t in _PLAIN},
}


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if len(args) == 1:
            return args[0], nullable
        return annotation, nullable
    return annotation, False


def _enum_values(annotation: Any) -> list[str] | None:
    if typing.get_origin(annotation) is Literal:
        return [str(v) for v in typing.get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(m.value) for m in annotation]
    return None


def pg_type_for(annotation: Any) -> str:
    """The Postgres type of a Python annotation (Optional[...] unwrapped)."""
    annotation, _ = _unwrap_optional(annotation)
    if _enum_values(annotation) is not None:
        return "text"
    if typing.get_origin(annotation) is typing.Annotated:
        return pg_type_for(typing.get_args(annotation)[0])
    if isinstance(annotation, type):
        for py, pg in _TYPE_TABLE:
            if issubclass(annotation, py):
                return pg
    return "jsonb"


def _column_from_field(name: str, info: FieldInfo) -> Column:
    annotation, nullable = _unwrap_optional(info.annotation)
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    pg_type = str(extra.get("pg_type") or pg_type_for(annotation))
    description = info.description or ""
    values = _enum_values(annotation)
    if values:
        hint = "one of: " + ", ".join(values)
        description = f"{description} ({hint})" if description else hint
    return Column(
        name=info.alias or name,
        pg_type=pg_type,
        description=description,
        py_type=info.annotation,
        nullable=nullable or not info.is_required(),
    )


def columns_from_model(model: type[BaseModel]) -> tuple[Column, ...]:
    """The columns of a pydantic model, in its field order."""
    return tuple(_column_from_field(n, f) for n, f in model.model_fields.items())
