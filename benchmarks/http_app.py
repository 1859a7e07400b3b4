"""The HTTP API the ``http-api`` benchmark reads: ``python -m benchmarks.http_app PORT N``.

FastAPI on uvicorn, in a process of its own (as an API is), serving N items:
``GET /items/{id}`` one item, ``GET /items?after=&limit=`` a page of them with the
next cursor in the body (at most 1,000 a page). Its OpenAPI document is at
``/openapi.json``; the server makes its tables from it. An item is
``bench_resources.item_row``'s row, so the checks know every answer
(``BENCH_WRONG_ANSWERS=api.qty`` makes every qty wrong, for the test that they catch it).
"""

import sys
from typing import Annotated

import uvicorn
from fastapi import FastAPI, HTTPException, Query
from pydantic import BaseModel

from .bench_resources import WRONG, item_row

MAX_PAGE = 1000


class Item(BaseModel):
    id: int
    name: str
    qty: int


class Page(BaseModel):
    items: list[Item]
    next_cursor: str | None = None


def make_app(count: int) -> FastAPI:
    app = FastAPI(title="Benchmark API")
    wrong = int("api.qty" in WRONG)
    items = [Item(**{**item_row(i), "qty": item_row(i)["qty"] + wrong})
             for i in range(1, count + 1)]

    @app.get("/items/{item_id}", operation_id="getItem")
    def get_item(item_id: int) -> Item:
        if not 1 <= item_id <= count:
            raise HTTPException(404, "no such item")
        return items[item_id - 1]

    @app.get("/items", operation_id="listItems")
    def list_items(after: int = 0, limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100
                   ) -> Page:
        page = items[after:after + limit]
        more = after + limit < count
        return Page(items=page, next_cursor=str(after + limit) if more else None)

    return app


if __name__ == "__main__":
    port, count = int(sys.argv[1]), int(sys.argv[2])
    print(f"api listening on 127.0.0.1:{port}", flush=True)
    uvicorn.run(make_app(count), host="127.0.0.1", port=port, log_level="warning",
                access_log=False)
