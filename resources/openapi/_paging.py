"""Paging: how a list operation gives its rows page by page, and where the next page is.

Styles:

- ``link``: the response's ``Link`` header names the next page (RFC 8288,
  ``rel="next"``); the next request is that URL.
- ``header``: a named response header (``Next-Page``) holds the next page's URL
  (absolute, or relative to the page's), or a cursor passed as ``param``.
- ``cursor``: the body holds the next cursor, or the next page's URL (absolute, or
  relative to the page's), at ``field``; the next request passes the cursor as the
  parameter ``param``, or is that URL.
- ``page``: the parameter ``param`` counts pages from 1, ``size`` is the page size.
- ``offset``: the parameter ``param`` is the offset of the first row, ``size`` the
  page size.
- ``none``: one request, unless its answer names the next page's URL (a ``Link``
  ``rel="next"``, a next-page header, a next URL in the body): that is followed,
  where ``none`` is not declared.

Rules:

- A style is recognised from the parameters' names (``page`` with ``per_page``,
  ``offset`` with ``limit``, a ``cursor``-like parameter with a next-cursor field
  in the response; a leading ``_`` is not part of the name: ``_limit`` is
  ``limit``), or a response header the document declares (``Link``, or a
  next-page header such as ``Next-Page``); ``[[openapi.apis.tables]] paging``
  declares it where they do not say, with ``param`` and ``size`` naming the page
  and size parameters. Those are the server's, never columns.
- The page size asked for is the statement's LIMIT when there is one, else the
  API's ``max_page_size``, never above the parameter's own ``maximum``.
- Paging ends at the last page: no next link, header or cursor, an empty page, or,
  by page or offset, a page shorter than asked for. The caller stops earlier at
  the LIMIT.
- Never a silent first page: where the paging ended but the answer says more pages
  exist (a next link, header or cursor it does not follow, a total larger than the
  rows read), ``tell_left`` says what shows it in a NOTICE.
- Nothing here makes a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from glove_scratchpad import errors

from ._spec import Operation

__all__ = ["NEXT_HEADERS", "Paging", "detect"]

_PAGE = ("page",)
_SIZES = ("per_page", "page_size", "pagesize", "pageSize", "limit", "size", "count",
          "max_results", "maxResults")
_OFFSETS = ("offset", "skip", "start")
_CURSORS = ("cursor", "page_token", "pageToken", "next_token", "nextToken", "after",
            "starting_after", "continuation", "continuation_token", "marker")
# A parameter the next URL of a link or header style carries, and nothing else sets.
_TOKENS = ("token",)
_CURSOR_FIELDS = ("next_cursor", "nextCursor", "next_page_token", "nextPageToken",
                  "next_token", "nextToken", "cursor", "next", "next_url", "nextUrl",
                  "continuation", "continuation_token", "marker", "next_marker")
_WRAPPERS = ("meta", "pagination", "paging", "page_info", "pageInfo", "links", "_links")
# Response headers that hold the next page (its URL, or a cursor), by lower-case name.
NEXT_HEADERS = ("next-page", "x-next-page", "x-next", "next-page-url", "x-next-page-url",
                "x-next-cursor", "x-continuation", "x-continuation-token")
# Where an answer says how many rows there are in all: a body field, a header.
_TOTAL_FIELDS = ("total", "total_count", "totalCount", "total_results", "totalResults",
                 "total_records", "totalRecords", "total_items", "totalItems")
_TOTAL_HEADERS = ("total-records", "x-total-count", "x-total", "total-count")


@dataclass(frozen=True, slots=True)
class Paging:
    """A list operation's paging."""

    style: str = "none"  # link, header, cursor, page, offset, none
    param: str | None = None  # the cursor, page number or offset parameter
    size: str | None = None  # the page-size parameter
    field: tuple[str, ...] = ()  # cursor: where the next cursor or URL is in the body
    maximum: int | None = None  # the page-size parameter's own maximum
    header: str | None = None  # header: the response header holding the next page
    # none: follow a next page's URL that an answer gives of itself (a list the rules
    # mapped; never a one-row table's, nor where the config declares one request)
    follow: bool = False

    @property
    def parameters(self) -> frozenset[str]:
        """The parameters paging sets, which no column gives."""
        return frozenset(n for n in (self.param, self.size) if n)

    def described(self) -> str:
        if self.style == "none":
            return ("one request, and the next pages its answers name" if self.follow
                    else "one request")
        size = f", {self.size} per page" if self.size else ""
        where = {"link": "the Link header's next", "header": f"the {self.header} header",
                 "cursor": f"cursor {self.param} from {'.'.join(self.field) or '?'}",
                 "page": f"page number {self.param}",
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
             got: int, size: int, headers: Mapping[str, str] | None = None
             ) -> tuple[str | None, dict[str, Any]] | None:
        """The next page: (a URL to follow, or None for the same one, and its query
        parameters); None when this page was the last."""
        if got == 0:
            return None
        if self.style == "link":
            found = links.get("next")
            return (str(found["url"]), {}) if found and found.get("url") else None
        if self.style == "header":
            value = (headers or {}).get(self.header or "")
            return self._onwards(value, query, f"the {self.header} header")
        if self.style == "cursor":
            return self._onwards(_at(body, self.field), query, ".".join(self.field))
        if self.style in ("page", "offset") and self.param:
            if self.size and got < size:
                return None  # a short page is the last
            step = 1 if self.style == "page" else got
            return None, {**query, self.param: int(query.get(self.param) or 0) + step}
        if self.style == "none" and self.follow:
            # The answer names its next page's URL: followed, as the style it shows.
            url = _next_url(links, headers or {}, body)
            return (url, {}) if url else None
        return None

    def _onwards(self, value: Any, query: Mapping[str, Any], where: str
                 ) -> tuple[str | None, dict[str, Any]] | None:
        """The next page from a cursor or URL found at ``where``."""
        if value in (None, "", False):
            return None
        if _is_url(value):
            return str(value), {}  # the next page's URL (relative: to this page's)
        if self.param is None:
            raise errors.ExternalRoutineError(
                f"the API gave a next cursor at {where} and the table names no parameter "
                "to pass it in",
                hint='Name it in the table\'s [[openapi.apis.tables]] entry: paging = '
                f'{{ style = "{self.style}", param = "…", … }}.')
        return None, {**query, self.param: value}

    def left(self, links: Mapping[str, Any], headers: Mapping[str, str], body: Any,
             read: int) -> str | None:
        """What in a last page's answer says more pages exist, that this paging did not
        follow (None: nothing does). ``read``: the rows read in all."""
        if self.style != "link" and (links.get("next") or {}).get("url"):
            return 'a Link rel="next" header'
        for name in NEXT_HEADERS:
            if headers.get(name) and not (self.style == "header" and self.header == name):
                return f"a {name} header"
        if self.style != "cursor" and isinstance(body, Mapping):
            for path in _cursor_paths(body):
                if _at(body, path) not in (None, "", False, [], {}):
                    return f"a next cursor at {'.'.join(path)}"
        total = _total(headers, body)
        if total is not None and total > read:
            return f"a total of {total} rows"
        return None

    def tell_left(self, ctx: Any, table: str, links: Mapping[str, Any],
                  headers: Mapping[str, str], body: Any, read: int) -> None:
        """A NOTICE (``ctx.notice``) where a read's last page says more exist that this
        paging did not follow: never a silent first page."""
        said = self.left(links, headers, body, read)
        notice = getattr(ctx, "notice", None)
        if said is None or notice is None:
            return
        notice(f"{table}: the API's answer shows more rows than the {read} read ({said}), "
               f"and the table's paging ({self.described()}) does not follow it",
               hint="Declare how the table pages in its [[openapi.apis.tables]] entry: "
               'paging = { style = "…", param = "…", size = "…" } (docs/openapi.md, '
               '"Paging").')


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://", "/"))


def _next_url(links: Mapping[str, Any], headers: Mapping[str, str], body: Any
              ) -> str | None:
    """A next page's URL that an answer gives of itself (a Link, a header, the body)."""
    found = links.get("next")
    if found and found.get("url"):
        return str(found["url"])
    for name in NEXT_HEADERS:
        if _is_url(headers.get(name)):
            return headers[name]
    if isinstance(body, Mapping):
        for path in _cursor_paths(body):
            if _is_url(value := _at(body, path)):
                return str(value)
    return None


def _cursor_paths(body: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Where a body may hold its next cursor: a known name, at the top or in a wrapper."""
    out: list[tuple[str, ...]] = [(name,) for name in _CURSOR_FIELDS if name in body]
    for wrapper in _WRAPPERS:
        inner = body.get(wrapper)
        if isinstance(inner, Mapping):
            out += [(wrapper, name) for name in _CURSOR_FIELDS if name in inner]
    return out


def _total(headers: Mapping[str, str], body: Any) -> int | None:
    """How many rows an answer says there are in all, where it says so."""
    for name in _TOTAL_HEADERS:
        if str(headers.get(name) or "").strip().isdigit():
            return int(headers[name])
    places = [body] if isinstance(body, Mapping) else []
    places += [body[w] for w in _WRAPPERS if isinstance(body, Mapping)
               and isinstance(body.get(w), Mapping)]
    for place in places:
        for name in _TOTAL_FIELDS:
            value = place.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
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


def _named(names: set[str], wanted: tuple[str, ...]) -> str | None:
    """The first of ``names`` that is one of ``wanted``, a leading ``_`` aside (``_limit``
    is ``limit``): the parameter's own name."""
    bare = {n.lstrip("_"): n for n in sorted(names)}  # "limit" itself before "_limit"
    return next((bare[w] for w in wanted if w in bare), None)


def detect(op: Operation, style: str | None = None, param: str | None = None,
           size: str | None = None, field: str | None = None, header: str | None = None
           ) -> Paging:
    """A list operation's paging: as declared (``style`` and the rest), else as its
    parameters' names and response say."""
    names = {p.name for p in op.parameters if p.location == "query"}
    size = size or _named(names, _SIZES)
    header = header.lower() if header else next(
        (h for h in NEXT_HEADERS if h in op.response_headers), None)
    if style is None:
        if "link" in op.response_headers or header is not None:
            # The links carry the page; its parameter is the server's, never a column.
            style = "link" if "link" in op.response_headers else "header"
            param = param or _named(names, (*_PAGE, *_CURSORS, *_OFFSETS, *_TOKENS))
        elif param is None and _named(names, _PAGE) and size:
            style, param = "page", _named(names, _PAGE)
        elif _named(names, _OFFSETS) and size:
            style, param = "offset", _named(names, _OFFSETS)
        elif (cursor := _named(names, _CURSORS)) and _cursor_field(op):
            style, param = "cursor", cursor
        else:
            # No paging the document shows; a page token beside a page size is still
            # the server's (a next page's URL carries it), never a column.
            style = "none"
            param = param or (_named(names, (*_CURSORS, *_TOKENS)) if size else None)
        declared = False
    else:
        declared = True
    if style == "page" and param is None:
        param = _named(names, _PAGE)
    if style == "offset" and param is None:
        param = _named(names, _OFFSETS)
    if style == "cursor" and param is None:
        param = _named(names, _CURSORS)
    if style == "header" and header is None:
        header = "next-page"
    path = tuple(field.split(".")) if field else (_cursor_field(op) if style == "cursor"
                                                  else ())
    return Paging(style, param, size, path, _maximum(op, size),
                  header if style == "header" else None, follow=not declared)
