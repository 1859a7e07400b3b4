"""A resource's rows checked: what a resolver returned, as dicts by column name.

Rules:
- A value of the wrong type is an error naming the resource, the column and the
  value, never a silent NULL; a row without a required field names the field.
- The resolver's own list and dicts are never changed; rows kept after their
  statement (``snapshot``) are never the resolver's dicts either.
- A model without validators of its own is checked column by column, with no
  model made per row; any other is validated a chunk of rows at a time, so a
  million rows never hold a million models at once.

This module knows nothing of SQL text, sidecars or sockets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from glove_scratchpad.errors import ExternalRoutineError, InvalidParameterValue

from ._columns import Column

__all__ = ["RowValidator"]

# Rows validated per pydantic call: only one chunk's models exist at a time.
_CHUNK = 256
_NONE = type(None)
# Model settings under which a field validates as its type alone does.
_PLAIN_CONFIG = frozenset((
    "title", "extra", "frozen", "populate_by_name", "validate_by_name", "validate_by_alias",
    "serialize_by_alias", "json_schema_extra", "json_schema_mode_override",
    "arbitrary_types_allowed", "protected_namespaces", "hide_input_in_errors", "defer_build",
    "use_attribute_docstrings", "alias_generator", "loc_by_alias", "from_attributes",
    "validate_assignment", "revalidate_instances", "ser_json_timedelta", "ser_json_bytes",
    "ser_json_inf_nan", "regex_engine", "plugin_settings", "cache_strings"))


class RowValidator:
    """The rows of one resource checked against its schema, or its columns."""

    __slots__ = ("_adapter", "_by_name", "_names", "_plain", "columns", "name", "schema")

    def __init__(self, name: str, columns: Sequence[Column],
                 schema: type[BaseModel] | None) -> None:
        self.name = name
        self.columns = tuple(columns)
        self.schema = schema
        self._by_name = {c.name: c for c in self.columns}
        self._names = tuple(c.name for c in self.columns)
        row_type = schema or dict[str, Any]
        self._adapter: TypeAdapter[Any] = TypeAdapter(list[row_type])  # type: ignore[valid-type]
        self._plain = _plain_model(schema, self.columns)

    def validate(
        self, rows: Any, stamp: Mapping[str, Any] | None = None, *, snapshot: bool = True
    ) -> list[dict[str, Any]]:
        """Rows a resolver returned, checked against the schema, as dicts by column name.

        ``stamp`` fills required-key columns a resolver left out with the value
        the statement pushed down. A value of the wrong type is an error naming
        the resource, the column and the value, never a silent NULL.

        The resolver's own list and dicts are never changed. With ``snapshot`` (rows
        kept after the statement that asked for them), the rows are never the
        resolver's dicts either, which it may change later. Without it, rows whose
        every value is already of its column's type are the resolver's own dicts:
        a statement reads them at once, and copying a large call's rows costs more
        than checking them.
        """
        dicts = self._row_dicts(rows)
        stamp = stamp or {}
        if self.schema is None:
            return self._validate_plain(_stamped(dicts, stamp))
        if self._plain:
            # No custom validator: column by column, no model per row, when every field
            # is given and no NULL reaches a field that refuses one (else the model says so).
            fast = self._validate_columns(dicts, stamp, snapshot)
            if fast is not None:
                return fast
        dicts = _stamped(dicts, stamp)
        # One pydantic call per chunk of rows, not per row, validating then dumping: a
        # chunk's models are gone before the next chunk's are made, so a million rows
        # never hold a million models at once.
        out: list[dict[str, Any]] = []
        adapter = self._adapter
        for start in range(0, len(dicts), _CHUNK):
            chunk = dicts[start:start + _CHUNK]
            try:
                models = adapter.validate_python(chunk)
            except ValidationError as exc:
                raise self._row_error(exc, chunk, start) from None
            out += adapter.dump_python(models, by_alias=True)
        return out

    def _row_dicts(self, rows: Any) -> list[Any]:
        """A resolver's answer as a list of dicts; the resolver's own list and dicts
        are never changed. Any other mapping becomes a dict: reading its columns must
        neither fail nor add to it (a ``defaultdict``'s missing key)."""
        if rows is None:
            return []
        if isinstance(rows, BaseModel | Mapping):
            rows = [rows]
        elif not isinstance(rows, list):
            rows = list(_iterate(rows, self.name))
        if set(map(type, rows)) - {dict}:
            rows = [row if type(row) is dict else self._as_dict(row) for row in rows]
        return rows

    def _as_dict(self, row: Any) -> dict[str, Any]:
        if isinstance(row, BaseModel):
            # Validated again: a badly typed field is our error, not a serializer warning.
            return row.model_dump(by_alias=True, warnings=False)
        if not isinstance(row, Mapping):
            raise ExternalRoutineError(
                f'resource "{self.name}" returned a row that is not a model or a dict:'
                f" {row!r}",
                hint="A select resolver returns an iterable of pydantic models or dicts.",
            )
        return dict(row)

    def _validate_plain(self, rows: list[Any]) -> list[dict[str, Any]]:
        """Rows of a resource declared by columns: each column converted in one pass."""
        columns = []
        for col in self.columns:
            values = [row.get(col.name) for row in rows]
            if col.py_type is not Any and values:
                try:
                    values = col.convert_many(values)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    value = values[int(err["loc"][0])]
                    raise self._value_error(col.name, value, err["msg"]) from None
            columns.append(values)
        names = self._names
        return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]

    def _validate_columns(self, rows: list[Any], stamp: Mapping[str, Any], snapshot: bool
                          ) -> list[dict[str, Any]] | None:
        names = self._names
        # First the values' types alone, no list made: rows of a typed tool mostly hold
        # what their columns do already.
        types = self._types(rows)
        if stamp and (types is None or any(_NONE in types[names.index(k)] for k in stamp)):
            rows = _stamped(rows, stamp)  # copies where stamped: the resolver's stay
            types = self._types(rows)
        if types is None or set(map(len, rows)) - {len(names)}:
            return None  # a field left out, or one that is not a column: the model's path
        if all(map(Column.as_they_are, self.columns, types)):
            # The rows themselves, or copies (each has exactly the columns).
            return list(map(dict.copy, rows)) if snapshot else rows
        columns = [list(map(itemgetter(n), rows)) for n in names]
        try:
            out = [values if col.as_they_are(kinds) else col.validate_many(values)
                   for col, kinds, values in zip(self.columns, types, columns, strict=True)]
        except ValidationError:
            return None  # the model's path words the error
        # The columns are of one length, and as many as the names (checked above).
        return [dict(zip(names, values, strict=False)) for values in zip(*out, strict=False)]

    def _types(self, rows: list[Any]) -> list[set[type]] | None:
        """Each column's set of value types, in order; None when a row lacks a column."""
        try:
            return [set(map(type, map(itemgetter(n), rows))) for n in self._names]
        except KeyError:
            return None

    def _row_error(self, exc: ValidationError, rows: list[Any], offset: int = 0
                   ) -> ExternalRoutineError:
        err = exc.errors()[0]
        loc = err["loc"]
        column = str(loc[1]) if len(loc) > 1 else "?"
        value = err.get("input")
        if err["type"] == "missing":
            return ExternalRoutineError(
                f'resource "{self.name}" returned a row without column "{column}"',
                detail=f"row {offset + int(loc[0]) + 1}: {rows[int(loc[0])]!r}"[:500],
                hint="The resolver must return every required field of the schema, or the "
                "field must be Optional in the model.",
            )
        return self._value_error(column, value, err["msg"])

    def _value_error(self, column: str, value: Any, why: str) -> ExternalRoutineError:
        col = self._by_name.get(column)
        pg_type = col.pg_type if col else "?"
        return ExternalRoutineError(
            f'resource "{self.name}" returned an invalid value for column "{column}"'
            f" ({pg_type}): {value!r}"[:500],
            detail=why,
            hint="The resolver's rows must match the resource's schema: fix the resolver, or "
            "declare the column with the type the tool really returns.",
        )

    def validate_insert(self, rows: list[dict[str, Any]]) -> list[Any]:
        """Rows an INSERT computed, as schema instances (or dicts without a schema)."""
        if self.schema is None:
            return self._validate_plain(rows)
        try:
            return list(self._adapter.validate_python(rows))
        except ValidationError as exc:
            err = exc.errors()[0]
            column = str(err["loc"][1]) if len(err["loc"]) > 1 else "?"
            raise InvalidParameterValue(
                f'invalid value for column "{column}" of resource "{self.name}":'
                f" {err.get('input')!r}",
                detail=err["msg"],
                hint=f"Check the column's type and description: \\d+ {self.name}",
            ) from None


def _stamped(rows: list[Any], stamp: Mapping[str, Any]) -> list[Any]:
    """Rows with each ``stamp`` column a row leaves out, or NULL, given its value: the
    rows stamped are copies."""
    for key, value in stamp.items():
        if any(row.get(key) is None for row in rows):
            rows = [{**row, key: value} if row.get(key) is None else row for row in rows]
    return rows


def _plain_model(schema: type[BaseModel] | None, columns: Sequence[Column]) -> bool:
    """Whether a model's rows validate the same column by column: no validator,
    serializer or computed field of its own, and fields that are its columns."""
    if schema is None:
        return False
    decorators = schema.__pydantic_decorators__
    if any((decorators.validators, decorators.field_validators, decorators.root_validators,
            decorators.field_serializers, decorators.model_serializers,
            decorators.model_validators, decorators.computed_fields)):
        return False
    config = schema.model_config
    if set(config) - _PLAIN_CONFIG or config.get("extra") not in (None, "ignore"):
        return False  # a setting that changes what validation gives (strip, strict, …)
    fields = schema.model_fields
    return len(fields) == len(columns) and all(
        (f.alias or n) == c.name and not f.metadata and f.validation_alias is None
        and (f.is_required() or f.default is None)
        for (n, f), c in zip(fields.items(), columns, strict=True))


def _iterate(rows: Iterable[Any], name: str) -> Iterable[Any]:
    try:
        yield from rows
    except TypeError:
        raise ExternalRoutineError(
            f'resource "{name}" returned {type(rows).__name__}, not rows',
            hint="A select resolver returns an iterable of pydantic models or dicts.",
        ) from None

