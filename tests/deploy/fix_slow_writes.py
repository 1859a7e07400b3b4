"""A resource whose writes take as long as they are told, served by ``--resources`` from
this file: ``INSERT INTO orders (title, seconds) VALUES (…, 30)`` is still firing for
30 seconds, long enough to kill its server while it runs."""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, define_resource

_STORE: dict[int, Order] = {}


class Order(BaseModel):
    id: int | None = Field(None, description="Order id, assigned on INSERT")
    title: str
    seconds: float = Field(0.0, description="How long the insert takes")


def _select(b: Bindings) -> list[Order]:
    return list(_STORE.values())


def _insert(rows: list[Order]) -> list[Order]:
    made = []
    for row in rows:
        time.sleep(row.seconds)  # a plain resolver: in a worker thread of its own
        order = Order(id=max(_STORE, default=0) + 1, title=row.title, seconds=row.seconds)
        _STORE[order.id] = order  # type: ignore[index]
        made.append(order)
    return made


resources = [define_resource("orders", schema=Order, primary_key=["id"], volatility="volatile",
                             description="Orders whose inserts take their time",
                             select=_select, insert=_insert)]
