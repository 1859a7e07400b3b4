"""An HTTP API of the tests' own (FastAPI): 250 items under each paging style, in pages
of at most 20, and rows of free-form shapes.

- ``/link/items`` (``after``, ``limit``; a ``Link`` header), ``/header/items``
  (``_token``, ``_limit``; a ``Next-Page`` header holding the next URL),
  ``/cursor/items`` (``cursor``, ``limit``; ``next_cursor`` in the body),
  ``/page/items`` (``page``, ``per_page``), ``/offset/items`` (``offset``, ``limit``;
  a ``total``): the styles, their size parameter's maximum 20, as the document says.
- ``/odd/items``: a header no rule knows (``X-Continue``, a cursor) and page
  parameters no rule knows (``tok``, ``n``): a hand table declares them.
- ``/hidden/items``: a ``Next-Page`` header its document does not declare, and no
  page parameters (the server's own page of 20).
- ``/quiet/items``: the first 20 items and a ``total`` of 250, and no way on.
- ``/about``: one object, whose ``next`` names a URL.
- ``/dicts`` (``-> list[dict]``), ``/counts`` (``-> dict[str, int]``), ``/open``
  (objects whose model allows properties it does not name).

Every request is logged (method, path, query) in ``Requests``.
"""

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request, Response
from pydantic import BaseModel, ConfigDict

from .api_app import CursorPage, Item, OffsetPage  # the same pages as the tests' API

ITEMS = 250
PAGE = 20  # the most a page holds: each size parameter's maximum




class About(BaseModel):
    name: str
    next: str


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int


@dataclass
class Requests:
    """What the API was asked: (method, path, query)."""

    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def of(self, path: str) -> list[dict[str, str]]:
        return [q for m, p, q in self.seen if p == path and m == "GET"]


def _items(after: int, size: int) -> list[Item]:
    return [Item(n=n, label=f"item {n}") for n in range(after + 1,
                                                        min(after + size, ITEMS) + 1)]


def _next(request: Request, **params: Any) -> str:
    return str(request.url.remove_query_params(list(params)).include_query_params(**params))


def make_app() -> tuple[FastAPI, Requests]:
    app = FastAPI(title="Paging styles")
    log = Requests()
    size = Annotated[int, Query(ge=1, le=PAGE)]

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        log.seen.append((request.method, request.url.path, dict(request.query_params)))
        return await call_next(request)

    @app.get("/link/items", operation_id="linkItems",
             responses={200: {"headers": {"Link": {"schema": {"type": "string"}}}}})
    def link_items(request: Request, response: Response, after: int = 0,
                   limit: size = PAGE) -> list[Item]:
        rows = _items(after, limit)
        if rows and rows[-1].n < ITEMS:
            response.headers["Link"] = f'<{_next(request, after=rows[-1].n)}>; rel="next"'
        return rows

    @app.get("/header/items", operation_id="headerItems",
             responses={200: {"headers": {"Next-Page": {"schema": {"type": "string"}}}}})
    def header_items(request: Request, response: Response,
                     token: Annotated[int, Query(alias="_token")] = 0,
                     limit: Annotated[int, Query(alias="_limit", ge=1, le=PAGE)] = PAGE
                     ) -> list[Item]:
        rows = _items(token, limit)
        if rows and rows[-1].n < ITEMS:
            response.headers["Next-Page"] = _next(request, _token=rows[-1].n)
        return rows

    @app.get("/cursor/items", operation_id="cursorItems")
    def cursor_items(cursor: str | None = None, limit: size = PAGE) -> CursorPage:
        rows = _items(int(cursor or 0), limit)
        more = rows and rows[-1].n < ITEMS
        return CursorPage(items=rows, next_cursor=str(rows[-1].n) if more else None)

    @app.get("/page/items", operation_id="pageItems")
    def page_items(page: int = 1, per_page: size = PAGE) -> list[Item]:
        return _items((page - 1) * per_page, per_page)

    @app.get("/offset/items", operation_id="offsetItems")
    def offset_items(offset: int = 0, limit: size = PAGE) -> OffsetPage:
        return OffsetPage(data=_items(offset, limit), total=ITEMS)

    @app.get("/odd/items", operation_id="oddItems")
    def odd_items(response: Response, tok: int = 0, n: size = PAGE) -> list[Item]:
        rows = _items(tok, n)
        if rows and rows[-1].n < ITEMS:
            response.headers["X-Continue"] = str(rows[-1].n)  # a cursor, not a URL
        return rows

    @app.get("/hidden/items", operation_id="hiddenItems")
    def hidden_items(request: Request, response: Response) -> list[Item]:
        after = int(request.query_params.get("after") or 0)  # not in the document
        rows = _items(after, PAGE)
        if rows and rows[-1].n < ITEMS:
            response.headers["Next-Page"] = _next(request, after=rows[-1].n)
        return rows

    @app.get("/quiet/items", operation_id="quietItems")
    def quiet_items() -> OffsetPage:
        return OffsetPage(data=_items(0, PAGE), total=ITEMS)

    @app.get("/about", operation_id="about")
    def about() -> About:  # one object that names a next URL: never followed
        return About(name="styles", next="/link/items")

    @app.get("/dicts", operation_id="dicts")
    def dicts() -> list[dict]:  # type: ignore[type-arg]
        return [{"id": 1, "name": "one", "tags": ["a"]}, {"id": 2, "deep": {"x": None}}]

    @app.get("/counts", operation_id="counts")
    def counts() -> dict[str, int]:
        return {"apples": 3, "pears": 0}

    @app.get("/open", operation_id="open")
    def open_rows() -> list[Open]:
        return [Open(id=1, colour="red"), Open(id=2)]

    return app, log
