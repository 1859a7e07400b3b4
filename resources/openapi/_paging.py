"""Paging: how a list operation gives its rows page by page, and where the next page is.

Styles:

- ``link``: the response's ``Link`` header names the next page (RFC 8288,
  ``rel="next"``); the next request is that URL.
- ``cursor``: the body holds the next cursor, or the next page's URL (absolute, or
  relative to the page's), at ``field``; the next request passes the cursor as the
  parameter ``param``, or is that URL.
- ``page``: the parameter ``param`` counts pages from 1, ``size`` is the page size.
- ``offset``: the parameter ``param`` is the offset of the first row, ``size`` the
  page size.
- ``none``: one request.

Rules:

- A style is recognised from the parameters' names (``page`` with ``per_page``,
  ``offset`` with ``limit``, a ``cursor``-like parameter with a next-cursor field
  in the response) or a declared ``Link`` header; ``[[openapi.apis.tables]]
  paging`` declares it where the names do not say.
- The page size asked for is the statement's LIMIT when there is one, else the
  API's ``max_page_size``, never above the parameter's own ``maximum``.
- Paging ends at the last page: no next link or cursor, an empty page, or, by page
  or offset, a page shorter than asked for. The caller stops earlier at the LIMIT.
- Nothing here makes a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glove_scratchpad import errors

from ._spec import Operation

__all__ = ["Paging", "detect"]

_PAGE = ("page",)
_SIZES = ("per_page", "page_size", "pagesize", "pageSize", "limit", "size", "count",
          "max_results", "maxResults")
_OFFSETS = ("offset", "skip", "start")
_CURSORS = ("cursor", "page_token", "pageToken", "next_token", "nextToken", "after",
            "starting_after", "continuation", "continuation_token", "marker")
_CURSOR_FIELDS = ("next_cursor", "nextCursor", "next_page_token", "nextPageToken",
                  "next_token", "nextToken", "cursor", "next", "next_url", "nextUrl",
                  "continuation", "continuation_token", "marker", "next_marker")
_WRAPPERS = ("meta", "pagination", "paging", "page_info", "pageInfo", "links", "_links")


@dataclass(frozen=True, slots=True)
class Paging:
    """A list operation's paging."""

    style: str = "none"  # link, cursor, page, offset, none
    param: str | None = None  # the cursor, page number or offset parameter
    size: str | None = None  # the page-size parameter
    field: tuple[str, ...] = ()  # cursor: where the next cursor or URL is in the body
    maximum: int | None = None  # the page-size parameter's own maximum

    @property
    def parameters(self) -> frozenset[str]:
        """The parameters paging sets, which no column gives."""
        return frozenset(n for n in (self.param, self.size) if n)

    def described(self) -> str:
        if self.style == "none":
            return "one request"
        size = f", {self.size} per page" if self.size else ""
        where = {"link": "the Link header's next", "cursor": f"cursor {self.param} from "
                 f"{'.'.join(self.field) or '?'}", "page": f"page number {self.param}",
                 "offset": f"offset {self.param}"}[self.style]
        return f"paged by {where}{size}"

    def page_size(self, limit: int | None, largest: int) -> int:
        """The page size to ask for: the LIMIT, else ``largest``, within the maximum."""
        size = largest if limit is None else max(1, min(limit, largest))
        return min(size, self.maximum) if self.maximum else size

    def first(self, size: int) -> dict[str, Any]:
        """The query parameters of the first page."""
        out: dict[str, Any] = {}
        if self.size:
            out[self.size] = size
        if self.style == "page" and self.param:
            out[self.param] = 1
        elif self.style == "offset" and self.param:
            out[self.param] = 0
        return out

    def next(self, query: Mapping[str, Any], links: Mapping[str, Any], body: Any,
             got: int, size: int) -> tuple[str | None, dict[str, Any]] | None:
        """The next page: (a URL to follow, or None for the same one, and its query
        parameters); None when this page was the last."""
        if got == 0:
            return None
        if self.style == "link":
            found = links.get("next")
            return (str(found["url"]), {}) if found and found.get("url") else None
        if self.style == "cursor":
            value = _at(body, self.field)
            if value in (None, "", False):
                return None
            if isinstance(value, str) and value.startswith(("http://", "https://", "/")):
                return value, {}  # the next page's URL (relative: to this page's)
            if self.param is None:
                raise errors.ExternalRoutineError(
                    f"the API gave a next cursor at {'.'.join(self.field)} and the table "
                    "names no parameter to pass it in",
                    hint='Name it in the table\'s [[openapi.apis.tables]] entry: paging = '
                    '{ style = "cursor", param = "…", field = "…" }.')
            return None, {**query, self.param: value}
        if self.style in ("page", "offset") and self.param:
            if self.size and got < size:
                return None  # a short page is the last
            step = 1 if self.style == "page" else got
            return None, {**query, self.param: int(query.get(self.param) or 0) + step}
        return None


def _at(body: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(body, Mapping):
            return None
        body = body.get(part)
    return body


def _maximum(op: Operation, name: str | None) -> int | None:
    param = op.parameter(name) if name else None
    value = param.schema.get("maximum") if param is not None else None
    return int(value) if isinstance(value, int | float) else None


def _cursor_field(op: Operation) -> tuple[str, ...]:
    """Where a response says its next cursor: a known name, at the top or in a wrapper."""
    if op.response is None:
        return ()
    props = op.response.get("properties") or {}
    for name in _CURSOR_FIELDS:
        if name in props:
            return (name,)
    for wrapper in _WRAPPERS:
        if wrapper in props:
            inner = op.response.sub(props[wrapper]).get("properties") or {}
            for name in _CURSOR_FIELDS:
                if name in inner:
                    return (wrapper, name)
    return ()


def detect(op: Operation, style: str | None = None, param: str | None = None,
           size: str | None = None, field: str | None = None) -> Paging:
    """A list operation's paging: as declared (``style`` and the rest), else as its
    parameters' names and response say."""
    names = {p.name for p in op.parameters if p.location == "query"}
    size = size or next((n for n in _SIZES if n in names), None)
    if style is None:
        if "link" in op.response_headers:
            # The links carry the page; its parameter is the server's, never a column.
            style = "link"
            param = param or next((n for n in (*_PAGE, *_CURSORS, *_OFFSETS) if n in names),
                                  None)
        elif param is None and any(n in names for n in _PAGE) and size:
            style, param = "page", "page"
        elif any(n in names for n in _OFFSETS) and size:
            style, param = "offset", next(n for n in _OFFSETS if n in names)
        elif (cursor := next((n for n in _CURSORS if n in names), None)) and _cursor_field(op):
            style, param = "cursor", cursor
        else:
            style = "none"
    if style == "page" and param is None:
        param = "page" if "page" in names else None
    if style == "offset" and param is None:
        param = next((n for n in _OFFSETS if n in names), None)
    if style == "cursor" and param is None:
        param = next((n for n in _CURSORS if n in names), None)
    path = tuple(field.split(".")) if field else (_cursor_field(op) if style == "cursor"
                                                  else ())
    return Paging(style, param, size, path, _maximum(op, size))
