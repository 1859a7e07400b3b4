"""What an HTTP API table's call would send, for EXPLAIN: each request's method, URL
and body with the statement's values filled in and secrets redacted, calling nothing."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from glove_scratchpad import errors

from .._resource import Bindings
from ._http import Api, redact
from ._plan import TablePlan
from ._spec import Operation
from ._values import Each, as_json, distinct, shown_body


class ApiTable(Protocol):
    """What EXPLAIN reads of a table (``_table.ApiTable``)."""

    api: Api
    plan: TablePlan
    arguments: list[str]

    def given(self, b: Bindings) -> tuple[dict[str, Any], bool]: ...
    def url_for(self, op: Operation, values: Mapping[str, Any]) -> str: ...
    def query_for(self, op: Operation, values: Mapping[str, Any]) -> dict[str, Any]: ...


def explain(table: ApiTable, verb: str, b: Bindings | None,
            values: Mapping[str, Any] | None = None) -> list[str]:
    """The requests a call of ``table`` would make. ``values``: an INSERT's row, or an
    UPDATE's changes, where the statement fixes them."""
    plan = table.plan
    op: Operation | None
    if verb == "select":
        if b is not None and plan.item is not None and plan.item_column and b.get(
                plan.item_column) is not None:
            op, paging = plan.item, "one request; a 404 is no row"
        else:
            op, paging = plan.select, plan.paging.described()
    else:
        op, paging = getattr(plan, verb), "one request per row" if verb == "insert" \
            else "one request per row it changes"
    if op is None:
        return []
    if b is None and values is None:
        url = table.api.url(op.path)
        return [f"Request: {op.method} {redact(url)} ({paging})"]
    given, complete = table.given(b) if b is not None else ({}, False)
    if b is not None and plan.item_column and b.get(plan.item_column) is not None:
        given[plan.item_column] = b.get(plan.item_column)
    lists = [n for n in table.arguments if isinstance(given.get(n), Each)]
    if verb != "select":  # the body: an INSERT's row, an UPDATE's changes
        sent = {**given, **values} if verb == "insert" and values else dict(values or {})
        body = {c.body: as_json(sent[c.name]) for c in plan.columns if c.body and (
            sent.get(c.name) is not None if verb == "insert" else c.name in sent)}
        line = _request_line(table, op, sent if verb == "insert" else given, False, b,
                                  paging)
        return [line.replace(" (", f" {shown_body(body)} (", 1) if body else line]
    if op is not plan.select or not lists:
        return [_request_line(table, op, given, complete and op is plan.select, b, paging)]
    return [_request_line(table, op, {**given, **dict(zip(lists, values, strict=True))},
                               complete, b, paging)
            for values in itertools.product(*(distinct(given[n]) for n in lists))]


def _request_line(table: ApiTable, op: Operation, given: dict[str, Any], paged: bool,
                  b: Bindings | None, paging: str) -> str:
    try:
        url = table.url_for(op, given)
    except errors.SqlError:
        url = table.api.url(op.path)
    query = table.query_for(op, given)
    if op is table.plan.select:
        query.update(table.plan.paging.first(table.plan.paging.page_size(
            b.limit if paged and b else None, table.api.config.max_page_size)))
    shown = redact(url + (f"?{httpx.QueryParams(query)}" if query else ""))
    return f"Request: {op.method} {shown} ({paging})"
