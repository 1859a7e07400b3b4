"""One table of an HTTP API as one resource: its resolvers make the API's requests.

Rules:

- **Select.** It sends GET (HEAD, OPTIONS) or an operation the config declares
  a read (``TablePlan.declared_read``), nothing else. A call whose item column is
  bound by ``=`` is the item GET (a 404 is no row, as on a one-row GET by path);
  any other is the list: keys and ``=`` filters are the operation's path,
  query and header parameters (an ``IN`` on an array parameter, a list), and the
  pages are read as Postgres reads rows, stopping at the LIMIT when every
  condition reached the API (else Postgres applies what did not, over every page).
  A search (a POST that reads) sends its arguments as its body.
- **Insert** makes one request per row, its path parameters and body from the
  row's columns (NULLs left out), with the write's idempotency key in an
  ``Idempotency-Key`` header where the operation declares one; what the API
  returns serves RETURNING. **Update** and **delete** name the row by their path
  parameters (the WHERE's values) and send the SET's columns as the body.
- A write answered with a 2xx fired: its answer is read leniently (``_answers``).
  A field that disagrees with the document is a WARNING (``ctx.warn``) and NULL;
  an empty or non-object answer says nothing, and the row as written stands.
- **Credentials**: the role's, else the API's; an operation that requires
  security with none set is 28000 before any request. A role with headers of its
  own has calls of its own (``ApiConfig.credential_of``): a lasting call it made
  is never read by another role.
- A read's row without a field the schema requires is an error naming the field; a value
  of another JSON type than its column's is one too (``json_value``, the rule MCP
  rows keep as well), never a NULL and never converted (``_answers``).
- A path parameter's value is one segment, percent-encoded (``/`` too); ``.``,
  ``..`` and the empty string are 22023. Header parameters the request frames
  itself with, or that carry credentials, are never columns (``NOT_COLUMNS``).
- Paging stops with an error at the first repeat: a page asked for again (the same
  cursor, a ``Link`` to itself) or a body read already.
- ``explain`` says the requests a call would make, secrets redacted, calling
  nothing (``_explain``).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any
from urllib.parse import urljoin

import httpx
from pydantic_core import to_jsonable_python

from glove_scratchpad import errors

from .._resource import Bindings, Resource, define_resource
from ._answers import AnswerReader
from ._explain import explain
from ._http import Api, redact
from ._plan import NOT_COLUMNS, SAFE_METHODS, Col, TablePlan
from ._spec import Operation
from ._values import (
    Each,
    distinct,
    from_body,
    query_value,
    segment,
    simple_value,
)

__all__ = ["ApiTable"]

# How an API's security scheme is given: the header that carries it.
_BEARER = "authorization"


def _page_key(url: str, query: Mapping[str, Any]) -> tuple[str, str]:
    """What names a page: its URL and its query parameters, in order."""
    return url, json.dumps(sorted((str(k), str(v)) for k, v in query.items()))


def _repeated(what: str, said: str) -> errors.ExternalRoutineError:
    return errors.ExternalRoutineError(
        f"{what}: paging stopped: {said}",
        hint="The API's paging does not advance: add LIMIT to read the first pages only, "
        "or declare the table's paging in its [[openapi.apis.tables]] entry.")


class ApiTable:
    """A table of one API, and the resolvers of its operations."""

    def __init__(self, api: Api, plan: TablePlan, schemes: Mapping[str, Mapping[str, Any]]
                 ) -> None:
        self.api = api
        self.plan = plan
        self.schemes = schemes
        self.by_name = {c.name: c for c in plan.columns}
        self.answers = AnswerReader(plan)
        # Arguments only: a parameter (or a search's body property) that no row holds.
        # A call's rows carry the value it was given, as a key's do: Postgres applies
        # the condition again, and a NULL would meet none.
        searched = plan.select is not None and plan.select.method != "GET"
        self.arguments = [c.name for c in plan.columns if c.prop is None and (
            c.param is not None or (c.body is not None and searched))]

    def resource(self) -> Resource:
        plan = self.plan
        columns = [{"name": c.name, "pg_type": c.pg_type, "description": self._comment(c),
                    "nullable": c.nullable} for c in plan.columns]
        verbs: dict[str, Any] = {}
        if plan.select is not None:
            verbs["select"] = self.select
        if plan.insert is not None:
            verbs["insert"] = self.insert
        if plan.update is not None:
            verbs["update"] = self.update
        if plan.delete is not None:
            verbs["delete"] = self.delete
        ops = ", ".join(f"{verb} {op.label}" for verb, op in self.sends())
        return define_resource(
            plan.name, columns=columns, keys=plan.keys, primary_key=plan.primary_key,
            filters=[f for f in plan.filters if f not in plan.keys], description=(
                f"{plan.description} ({ops})" if plan.description else f"({ops})"),
            volatility=plan.volatility,  # type: ignore[arg-type]
            ttl=plan.ttl, explain=self.explain, credential=self.api.config.credential_of,
            **verbs, about=[part for op in plan.operations
                            for part in (op.summary, op.operation_id or "", *op.tags)])

    def sends(self) -> list[tuple[str, Operation]]:
        """Which operation each verb sends (a select by its item column, the item GET)."""
        plan = self.plan
        out = [("select", plan.select)]
        if plan.item is not None:
            out.append((f"select by {plan.item_column}", plan.item))
        out += [("insert", plan.insert), ("update", plan.update), ("delete", plan.delete)]
        return [(verb, op) for verb, op in out if op is not None]

    def _comment(self, col: Col) -> str:
        text = col.description
        role = col.role
        if role and role not in text:
            text = f"{text} ({role})" if text else role.capitalize()
        return text

    # -- requests ---------------------------------------------------------------------

    def _headers(self, op: Operation, user: str, given: Mapping[str, Any]) -> dict[str, str]:
        """The request's headers: the role's credentials and the header parameters; 28000
        when the operation requires security that none of them gives."""
        headers = self.api.config.headers_for(user)
        if op.security and not self._satisfied(op, headers):
            names = ", ".join(sorted({n for req in op.security for n in req}))
            raise errors.InvalidAuthorizationSpecification(
                f"{op.label} requires credentials ({names}), and none are set"
                + (f" for user {user!r}" if user else ""),
                hint=f"Set them in {self.api.entry(user)}, e.g. headers = {{ Authorization = "
                "\"Bearer ${TOKEN}\" }.")
        own = {h.lower() for h in headers}
        for col in self.plan.columns:
            if col.location == "header" and col.name in given and given[col.name] is not None:
                header = col.param or col.name
                if header.lower() not in own and header.lower() not in NOT_COLUMNS:
                    headers[header] = simple_value(given[col.name], header, "header",
                                                   col.name, self.plan.name)
        return headers

    def _satisfied(self, op: Operation, headers: Mapping[str, str]) -> bool:
        have = {h.lower() for h in headers}
        for requirement in op.security:
            if not requirement:
                return True  # {}: anonymous is allowed
            ok = True
            for name in requirement:
                scheme = self.schemes.get(name) or {}
                kind = scheme.get("type")
                where = (str(scheme.get("name") or "").lower()
                         if kind == "apiKey" and scheme.get("in") == "header" else _BEARER)
                ok = ok and where in have
            if ok:
                return True
        return False

    def url_for(self, op: Operation, values: Mapping[str, Any]) -> str:
        path = op.path
        for p in op.path_parameters:
            col = self.plan.by_param(p.name)
            value = values.get(col.name) if col is not None else None
            if value is None:
                raise errors.InvalidParameterValue(
                    f"{op.label} needs its path parameter {p.name}",
                    hint=f"Give {col.name if col else p.name} a value in the WHERE (or the row).")
            path = path.replace("{" + p.name + "}", segment(op.label, p.name, value))
        return self.api.url(path)

    def query_for(self, op: Operation, values: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in op.parameters:
            if p.location != "query":
                continue
            col = self.plan.by_param(p.name)
            if col is None or values.get(col.name) is None:
                continue
            value = query_value(values[col.name], p.name, col.kind, col.name, op.label)
            if isinstance(value, dict):  # an object: each property a parameter
                out.update(value)
            else:
                out[p.name] = value
        return out

    # -- select -------------------------------------------------------------------------

    def given(self, b: Bindings) -> tuple[dict[str, Any], bool]:
        """The values the API is given, by column; and whether every condition reached
        it (so that it may stop at the LIMIT)."""
        given: dict[str, Any] = {}
        complete = True
        for col in self.plan.columns:
            conditions = b.where(col.name)
            if col.name in self.plan.keys:
                given[col.name] = b.get(col.name)
                continue
            for op, value in conditions:
                if op == "=" and (col.param or col.name in self.arguments):
                    given[col.name] = value
                elif op == "in" and ((col.param and col.array) or col.name in self.arguments):
                    given[col.name] = Each(value)  # one call per value, or one with them
                else:
                    complete = False
        return given, complete

    async def select(self, b: Bindings, ctx: Any = None) -> Any:
        plan = self.plan
        user = getattr(ctx, "user", "") or ""
        given, complete = self.given(b)
        item = plan.item_column
        if plan.item is not None and item is not None and b.get(item) is not None:
            return await self._item(plan.item, given, b.get(item), user, ctx)
        assert plan.select is not None
        self._read_only(plan.select)
        limit = b.limit if complete else None
        wanted = min(w for w in (limit, getattr(ctx, "rows_wanted", None), sys.maxsize)
                     if w is not None)
        lists = [n for n in self.arguments if isinstance(given.get(n), Each)]
        if lists:
            return self._each(plan.select, given, lists, limit, wanted, user, ctx)
        return self._pages(plan.select, given, limit, wanted, user, ctx)

    def _read_only(self, op: Operation) -> None:
        """A read sends a safe method, or an operation the config declares a read; never
        anything else (the mapping makes no such table: this holds whatever made it)."""
        if op.method in SAFE_METHODS or self.plan.declared_read:
            return
        raise errors.InsufficientPrivilege(
            f"{self.plan.name}: a SELECT would send {op.label}, which is not declared a read",
            hint=f'If it only reads, add reads = ["{op.label}"] to the API\'s '
            "[[openapi.apis]] entry.")

    async def _each(self, op: Operation, given: dict[str, Any], lists: list[str],
                    limit: int | None, wanted: int, user: str, ctx: Any
                    ) -> AsyncIterator[dict[str, Any]]:
        """An IN list on an array parameter that no row holds: one call per value, whose
        rows carry it (rows of one call with the list could not say which value each
        is of)."""
        sent = 0
        for values in itertools.product(*(distinct(given[n]) for n in lists)):
            pages = self._pages(op, {**given, **dict(zip(lists, values, strict=True))},
                                None if limit is None else limit - sent, wanted - sent,
                                user, ctx)
            try:
                async for row in pages:
                    yield row
                    sent += 1
                    if sent >= wanted:
                        return
            finally:
                await pages.aclose()

    async def _item(self, op: Operation, given: dict[str, Any], value: Any, user: str,
                    ctx: Any) -> list[dict[str, Any]]:
        column = self.plan.item_column
        assert column is not None
        values = {**given, column: value}
        url = self.url_for(op, values)
        response = await self.api.request("GET", url, params=self.query_for(op, values) or None,
                                          headers=self._headers(op, user, values), ctx=ctx,
                                          what=f"{self.plan.name}: {op.label}")
        if response.status_code == 404:
            return []
        self.api.raise_for(response, f"{self.plan.name}: {op.label}", user)
        row = self.answers.row(self.answers.json(response, op))
        row[column] = row.get(column) or value  # the item's key, when its rows lack it
        return self._stamped([row], given)

    def _stamped(self, rows: list[dict[str, Any]], given: Mapping[str, Any]
                 ) -> list[dict[str, Any]]:
        """Rows with the values of the arguments they were asked for (one value each:
        an IN list on an array parameter says nothing of a row's own)."""
        stamp = {n: given[n] for n in self.arguments
                 if n in given and not isinstance(given[n], Each)}
        for row in rows if stamp else ():
            row.update(stamp)
        return rows

    async def _pages(self, op: Operation, given: dict[str, Any], limit: int | None,
                     wanted: int, user: str, ctx: Any) -> AsyncGenerator[dict[str, Any]]:
        """The rows of a list operation, page by page. A next page is asked for while
        this page's rows are pulled only when the server is sure to pull past them
        (``wanted``: the LIMIT, else ``ctx.rows_wanted``): the requests are those a
        page-at-a-time read makes."""
        plan, paging = self.plan, self.plan.paging
        what = f"{plan.name}: {op.label}"
        size = paging.page_size(limit, self.api.config.max_page_size)
        query = {**self.query_for(op, given), **paging.first(size)}
        url: str = self.url_for(op, given)
        headers = self._headers(op, user, given)
        body = self._search_body(op, given)

        def ask(url: str, query: dict[str, Any]) -> asyncio.Future[Any]:
            return asyncio.ensure_future(self.api.request(
                op.method, url, params=query or None, body=body, headers=headers, ctx=ctx,
                what=what))

        sent = 0
        # The pages asked for and the bodies read: an API whose paging does not advance
        # (a cursor that always answers the same, a Link to itself) is an error at its
        # first repeat, not a loop until the statement's timeout.
        asked = {_page_key(url, query)}
        bodies: set[bytes] = set()
        pending: asyncio.Future[Any] | None = ask(url, query)
        try:
            while pending is not None:
                response = await pending
                pending = None
                if response.status_code == 404 and plan.one_row and op.path_parameters:
                    return  # an item by its path, not there: no row, as an item GET's
                self.api.raise_for(response, what, user)
                if plan.whole is not None:  # no schema: the answer is the row
                    yield from_body(plan.whole, self.by_name[plan.whole].pg_type, response,
                                    self._stamped([{}], given)[0])
                    return
                digest = hashlib.blake2b(response.content, digest_size=16).digest()
                if digest in bodies:
                    raise _repeated(what, f"the API answered the same page again ("
                                    f"{redact(str(response.url))})")
                bodies.add(digest)
                found = self.answers.json(response, op)
                items = self.answers.items(found)
                links = {str(k): v for k, v in response.links.items()}
                following = paging.next(query, links, found, len(items), size, response.headers)
                if following is None and not plan.one_row and sent + len(items) < wanted:
                    paging.tell_left(ctx, plan.name, links, response.headers, found,
                                     sent + len(items))
                if following is not None and sent + len(items) < wanted:
                    next_url, query = following
                    if next_url is not None:
                        url, query = urljoin(str(response.url), next_url), {}
                    key = _page_key(url, query)
                    if key in asked:
                        raise _repeated(what, "the API named a page already read as the "
                                        "next one (" + redact(str(httpx.URL(
                                            url, params=query or None))) + ")")
                    asked.add(key)
                    pending = ask(url, query)  # read ahead: its rows will be pulled
                for row in self._stamped(self.answers.rows(items), given):
                    yield row
                    sent += 1
                    if sent >= wanted:
                        return
        finally:
            if pending is not None:  # closed early (an error, a cancel): not wanted now
                pending.cancel()
                pending.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _search_body(self, op: Operation, given: Mapping[str, Any]) -> dict[str, Any] | None:
        if op.method == "GET":
            return None
        return {c.body: to_jsonable_python(given[c.name]) for c in self.plan.columns
                if c.body and given.get(c.name) is not None}

    # -- writes -------------------------------------------------------------------------

    async def insert(self, rows: list[Any], ctx: Any = None) -> list[dict[str, Any]]:
        op = self.plan.insert
        assert op is not None
        user = getattr(ctx, "user", "") or ""
        made = []
        key = getattr(ctx, "idempotency_key", None)
        for i, row in enumerate(rows):
            values = row.model_dump() if hasattr(row, "model_dump") else dict(row)
            headers = self._headers(op, user, values)
            if key and "idempotency-key" in {p.name.lower() for p in op.parameters}:
                headers["Idempotency-Key"] = key if len(rows) == 1 else f"{key}:{i + 1}"
            body = {c.body: to_jsonable_python(values[c.name]) for c in self.plan.columns
                    if c.body and values.get(c.name) is not None}
            response = await self.api.request(op.method, self.url_for(op, values), body=body,
                                              params=self.query_for(op, values) or None,
                                              headers=headers, ctx=ctx, write=True,
                                              what=f"{self.plan.name}: {op.label}")
            self.api.raise_for(response, f"{self.plan.name}: {op.label}", user)
            created = self.answers.answered(response, op, ctx) or {}
            made.append({**{k: v for k, v in values.items() if v is not None}, **created})
        return made

    async def update(self, changes: dict[str, Any], b: Bindings, ctx: Any = None) -> Any:
        op = self.plan.update
        assert op is not None
        settable = [c for c in self.plan.columns if c.body]
        wrong = [name for name in changes if not self.by_name[name].body]
        if wrong:
            raise errors.FeatureNotSupported(
                f'{self.plan.name}: {op.label} cannot set "{wrong[0]}"',
                hint="Its request body takes: " + ", ".join(c.name for c in settable) + ".")
        body = {self.by_name[n].body: to_jsonable_python(v) for n, v in changes.items()}
        return await self._change(op, b, ctx, body)

    async def delete(self, b: Bindings, ctx: Any = None) -> Any:
        op = self.plan.delete
        assert op is not None
        return await self._change(op, b, ctx, None)

    async def _change(self, op: Operation, b: Bindings, ctx: Any, body: Any) -> Any:
        user = getattr(ctx, "user", "") or ""
        values = {c.name: b.get(c.name) for c in self.plan.columns if b.has(c.name)}
        what = f"{self.plan.name}: {op.label}"
        headers = self._headers(op, user, values)
        if getattr(ctx, "idempotency_key", None) and "idempotency-key" in {
                p.name.lower() for p in op.parameters}:
            headers["Idempotency-Key"] = ctx.idempotency_key
        response = await self.api.request(op.method, self.url_for(op, values), body=body,
                                          params=self.query_for(op, values) or None,
                                          headers=headers, ctx=ctx, what=what, write=True)
        if op.method == "DELETE" and response.status_code == 404:
            return None  # gone already
        self.api.raise_for(response, what, user)
        answered = self.answers.answered(response, op, ctx)
        return [answered] if answered and op.method != "DELETE" else None

    # -- EXPLAIN ------------------------------------------------------------------------

    def explain(self, verb: str, b: Bindings | None,
                values: Mapping[str, Any] | None = None) -> list[str]:
        """The requests a call would make, secrets redacted; calling nothing. ``values``:
        an INSERT's row, or an UPDATE's changes, where the statement fixes them."""
        return explain(self, verb, b, values)
