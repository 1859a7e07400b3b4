"""What an HTTP API answers, read as rows: a read's items, and a write's answer.

Rules:

- A read's rows are at the table's ``rows`` path in the body (or are the body); an
  object is one row. A row without a field the document requires is an error
  naming the field, as is a null where the document says never null, and a value
  of another JSON type than its column's (``json_value``): never a NULL, never
  converted. A plain row (a dict with every checked field) takes the fast path.
- A write's 2xx answer is read once the write has fired: nothing turns it into an
  error now. An empty or non-object answer says nothing (the row as written
  stands); a field that disagrees with the document is a WARNING and NULL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from glove_scratchpad import errors

from .._json import AS_SENT, json_value
from ._plan import TablePlan
from ._spec import Operation

__all__ = ["AnswerReader"]


class AnswerReader:
    """The rows in one table's answers, checked against its document."""

    def __init__(self, plan: TablePlan) -> None:
        self.plan = plan
        # A row's columns by field, and the fields a row must not lack or give as null
        # (those the slow path, row, checks one by one).
        self._fields = [(c.prop, c.name) for c in plan.columns if c.prop is not None]
        # The columns that hold a row's whole value (a free-form object), as it came.
        self._whole = [(c.name, c.pg_type) for c in plan.columns if c.whole]
        # The columns whose type limits the JSON they take (json_value): not jsonb.
        self._typed = [(c.prop, c.name, c.pg_type, AS_SENT.get(c.pg_type))
                       for c in plan.columns
                       if c.prop is not None and c.pg_type not in ("jsonb", "json")]
        self._source = f"{plan.name}: the API"
        self._checked = [c.prop for c in plan.columns
                         if c.prop is not None and (c.required or not c.nullable)]

    def json(self, response: Any, op: Operation) -> Any:
        """A response's body as JSON; a body that is none is the API's error, named."""
        try:
            return response.json()
        except ValueError:
            raise errors.ExternalRoutineError(
                f"{self.plan.name}: {op.label} answered {response.status_code} with no JSON "
                f"({response.headers.get('content-type', 'no content type')})",
                hint="The document says this operation returns JSON; check base_url.") from None

    def items(self, body: Any) -> list[Any]:
        """The rows of a response, as the API gave them (at ``rows``, or the body)."""
        plan = self.plan
        for part in plan.rows:
            body = body.get(part) if isinstance(body, Mapping) else None
        if body is None:
            return []
        if plan.one_row or isinstance(body, Mapping):
            return [body]
        if not isinstance(body, list):
            raise errors.ExternalRoutineError(
                f"{plan.name}: the API returned {type(body).__name__} where the document "
                "says rows (an array)", hint="The document and the API disagree.")
        return body

    def rows(self, items: list[Any]) -> list[dict[str, Any]]:
        """Items of a response as rows (each checked as ``row`` does, a plain one fast)."""
        fields, checked, row, typed = self._fields, self._checked, self.row, self._typed
        rows = []
        for item in items:
            if type(item) is dict and None not in map(item.get, checked):
                plain = {name: item.get(prop) for prop, name in fields}
                for name, pg_type in self._whole:
                    plain[name] = json_value(item, pg_type, source=self._source, field=name)
                for prop, name, pg_type, as_sent in typed:
                    value = plain[name]
                    if value is not None and type(value) is not as_sent:
                        plain[name] = json_value(value, pg_type, source=self._source,
                                                 field=prop)
                rows.append(plain)
            else:
                rows.append(row(item))
        return rows

    def row(self, item: Any) -> dict[str, Any]:
        """A JSON object as a row: each column from its field; a missing required field
        is the API's error, named."""
        if not isinstance(item, Mapping):
            value = next((c for c in self.plan.columns if c.prop is None and c.param is None
                          and c.body is None), None)
            return {value.name if value else "value": item}
        row = {n: json_value(item, t, source=self._source, field=n) for n, t in self._whole}
        for col in self.plan.columns:
            if col.prop is None:
                continue
            if col.prop in item:
                if item[col.prop] is None and not col.nullable:
                    raise errors.ExternalRoutineError(
                        f'{self.plan.name}: the API returned null for the field '
                        f'"{col.prop}", which its document says is never null',
                        hint="The document and the API disagree: the column is NOT NULL.")
                row[col.name] = json_value(item[col.prop], col.pg_type, source=self._source,
                                           field=col.prop)
            elif col.required:
                raise errors.ExternalRoutineError(
                    f'{self.plan.name}: the API returned a row without the field "{col.prop}", '
                    "which its document requires",
                    detail=f"fields: {', '.join(sorted(map(str, item)))}"[:500],
                    hint="The document and the API disagree: the column would read NULL.")
        return row

    def answered(self, response: httpx.Response, op: Operation, ctx: Any
                  ) -> dict[str, Any] | None:
        """What a write's 2xx answer says of its row, once the write has fired: nothing
        turns it into an error now. An empty or non-object answer (204, ``""``, ``{}``)
        says nothing (None: the row as written stands); a field that disagrees with the
        document is a WARNING naming it, and is NULL."""
        try:
            answer = response.json() if response.content.strip() else None
        except ValueError:
            answer = None
        if not isinstance(answer, Mapping) or not answer:
            return None
        row: dict[str, Any] = {}
        warn = getattr(ctx, "warn", None)
        for col in self.plan.columns:
            if col.prop is None:
                continue
            if col.prop not in answer:
                if col.required and warn is not None:
                    warn(f'{self.plan.name}: {op.label} fired, and its answer has no field '
                         f'"{col.prop}", which the document requires: {col.name} is NULL',
                         hint="The document and the API disagree; the write happened.")
                continue
            value = answer[col.prop]
            if value is None and not col.nullable and warn is not None:
                warn(f'{self.plan.name}: {op.label} fired, and its answer has null for the '
                     f'field "{col.prop}", which the document says is never null',
                     hint="The document and the API disagree; the write happened.")
            try:
                row[col.name] = None if value is None else json_value(
                    value, col.pg_type, source=self._source, field=col.prop)
            except errors.SqlError as exc:
                row[col.name] = None
                if warn is not None:
                    warn(f"{op.label} fired, and its answer disagrees with the document: "
                         f"{exc.message}; {col.name} is NULL",
                         hint="The document and the API disagree; the write happened.")
        return row
