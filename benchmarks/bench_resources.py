"""What the benchmarked server serves: ``serve --resources benchmarks/bench_resources.py``.

Loaded by the server subprocess as a file, so it imports nothing from ``benchmarks``.

- ``items`` (immutable): 100,000 rows, key and primary key ``id``; the point lookup.
  Rows are a pure function of the id, so the plain table the direct runs read
  (``items_sql`` below) holds exactly the same values.
- ``rows`` (volatile): ``n`` rows for ``WHERE n = …``; the materialization benchmark.
  The resolver keeps its last answer, so the time measured is the server's, not the
  time to build the Python dicts.
- ``big`` (immutable, no key, primary key ``id``): every row of ``items`` in one
  call, which the server keeps as a sidecar table; ``big_ttl`` (stable, ``ttl``
  ``BIG_TTL`` seconds, ``BENCH_BIG_TTL``): the same rows, kept until the ttl ends.
  The direct runs read ``items``. The list is built once, so the time measured is
  the server's.
- ``kept_rows`` (immutable, key ``n``, primary key ``i``): the rows of ``rows``, from
  the same built list; the first materialization of a kept call.
- ``kept_stats`` (volatile): how many times ``big``, ``big_ttl`` and ``kept_rows``
  were called since the server started (a kept call is not called again).
- ``slow`` (volatile): every call sleeps ``SLOW_SECONDS``; ``slow_stats`` reports the
  peak number of ``slow`` calls in flight since it was last read.
- ``customer``, ``orders``, ``product``, ``review``, ``shipment``: the five-resource
  join that EXPLAIN plans (their resolvers are never called by EXPLAIN).

``BENCH_WRONG_ANSWERS`` (comma-separated: ``items.qty``, ``items.name``, ``rows.name``,
``big.qty``, ``big_ttl.qty``, ``kept_rows.name``, and ``api.qty`` for the HTTP API of
``benchmarks.http_app``) makes the server's resolvers answer
wrongly, for the test that the benchmarks' checks catch it (tests/benchmarks); the
direct tables are built from the right rows.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, define_resource

ITEMS = int(os.environ.get("BENCH_ITEMS", "100000"))
SLOW_SECONDS = float(os.environ.get("BENCH_SLOW_SECONDS", "0.1"))
BIG_TTL = float(os.environ.get("BENCH_BIG_TTL", "2"))
WRONG = frozenset(filter(None, os.environ.get("BENCH_WRONG_ANSWERS", "").split(",")))


# -- items: the point lookup ---------------------------------------------------------


class Item(BaseModel):
    id: int = Field(description="Item id, 1 to 100,000")
    name: str = Field(description="Item name")
    qty: int = Field(description="Quantity in stock")


def item_row(i: int) -> dict:
    return {"id": i, "name": f"item {i}", "qty": i * 7 % 1000}


def items_sql(table: str = "items", count: int = ITEMS) -> list[str]:
    """The same rows as a plain indexed table, for the direct runs."""
    return [
        f"CREATE TABLE {table} (id bigint PRIMARY KEY, name text NOT NULL, qty bigint NOT NULL)",
        f"INSERT INTO {table} SELECT i, 'item ' || i, i * 7 % 1000"
        f" FROM generate_series(1, {count}) AS i",
        f"VACUUM ANALYZE {table}",
    ]


def _items(b: Bindings) -> list[dict]:
    i = b.one("id")
    if not 1 <= i <= ITEMS:
        return []
    row = item_row(i)
    if "items.qty" in WRONG:
        row["qty"] += 1
    if "items.name" in WRONG:
        row["name"] = f"item {i + 1}"
    return [row]


items = define_resource(
    "items",
    schema=Item,
    keys=["id"],
    primary_key=["id"],
    volatility="immutable",
    description="A catalog of 100,000 items",
    select=_items,
    inline=True,  # pure and in memory: no worker thread
)


# -- rows: materialization -----------------------------------------------------------


class Row(BaseModel):
    n: int = Field(description="How many rows to return (required)")
    i: int = Field(description="Row number, 1 to n")
    name: str = Field(description="A label")
    value: float = Field(description="A number")


def make_rows(n: int) -> list[dict]:
    return [{"n": n, "i": i, "name": f"row {i}", "value": i * 0.5} for i in range(1, n + 1)]


_last_rows: dict[int, list[dict]] = {}


def _made_rows(n: int) -> list[dict]:
    """``make_rows(n)``, kept while ``n`` is asked again (by ``rows`` or ``kept_rows``)."""
    found = _last_rows.get(n)
    if found is None:
        _last_rows.clear()  # keep one answer: a 1M-row list is large
        found = _last_rows[n] = make_rows(n)
    return found


def _one_wrong_name(rows: list[dict]) -> list[dict]:
    """The right count, one wrong value (a copy: the kept list stays right)."""
    return [*rows[:-1], {**rows[-1], "name": "wrong"}] if rows else rows


def _rows(b: Bindings) -> list[dict]:
    found = _made_rows(b.one("n"))
    return _one_wrong_name(found) if "rows.name" in WRONG else found


rows = define_resource(
    "rows",
    schema=Row,
    keys=["n"],
    volatility="volatile",
    description="n generated rows",
    select=_rows,
    inline=True,
)


# -- kept calls: big, big_plain, big_ttl, kept_rows, kept_stats ----------------------

CALLS: Counter[str] = Counter()  # resolver calls of the kept resources
_every_item: list[dict] = []


def _all_items(resource: str) -> list[dict]:
    """Every item's row (built once); each item's qty one too many with ``<resource>.qty``."""
    CALLS[resource] += 1
    if not _every_item:
        _every_item.extend(item_row(i) for i in range(1, ITEMS + 1))
    if f"{resource}.qty" in WRONG:
        return [{**r, "qty": r["qty"] + 1} for r in _every_item]
    return _every_item


def _big(b: Bindings) -> list[dict]:
    return _all_items("big")


def _big_ttl(b: Bindings) -> list[dict]:
    return _all_items("big_ttl")


def _big_plain(b: Bindings) -> list[dict]:
    return _all_items("big_plain")


def _kept_rows(b: Bindings) -> list[dict]:
    CALLS["kept_rows"] += 1
    found = _made_rows(b.one("n"))
    return _one_wrong_name(found) if "kept_rows.name" in WRONG else found


def _kept_stats(b: Bindings) -> list[dict]:
    return [{"resource": r, "calls": CALLS[r]}
            for r in ("big", "big_plain", "big_ttl", "kept_rows")]


big = define_resource(
    "big",
    schema=Item,
    primary_key=["id"],
    volatility="immutable",
    description=f"The {ITEMS:,} items in one call, kept as a sidecar table",
    select=_big,
    inline=True,
)
big_plain = define_resource(
    "big_plain",
    schema=Item,
    volatility="immutable",
    description=f"The {ITEMS:,} items in one call, with no primary key and no key: its "
    "kept table is indexed for the lookups statements make",
    select=_big_plain,
    inline=True,
)
big_ttl = define_resource(
    "big_ttl",
    schema=Item,
    primary_key=["id"],
    volatility="stable",
    ttl=BIG_TTL,
    description=f"The {ITEMS:,} items in one call, kept for {BIG_TTL:g} s",
    select=_big_ttl,
    inline=True,
)
kept_rows = define_resource(
    "kept_rows",
    schema=Row,
    keys=["n"],
    primary_key=["i"],
    volatility="immutable",
    description="n generated rows, each call kept as a sidecar table",
    select=_kept_rows,
    inline=True,
)
kept_stats = define_resource(
    "kept_stats",
    columns=[("resource", "text"), ("calls", "bigint")],
    volatility="volatile",
    description="Calls of big, big_ttl and kept_rows since the server started",
    select=_kept_stats,
    inline=True,
)


# -- slow: resolver concurrency ------------------------------------------------------


class Slow(BaseModel):
    k: int = Field(description="Any key (required)")
    v: int = Field(description="k times two")


_in_flight = 0
_peak = 0


async def _slow(b: Bindings) -> list[dict]:
    global _in_flight, _peak
    _in_flight += 1
    _peak = max(_peak, _in_flight)
    try:
        await asyncio.sleep(SLOW_SECONDS)
    finally:
        _in_flight -= 1
    k = b.one("k")
    return [{"k": k, "v": 2 * k}]


def _slow_stats(b: Bindings) -> list[dict]:
    global _peak
    peak, _peak = _peak, 0
    return [{"peak": peak}]


slow = define_resource(
    "slow",
    schema=Slow,
    keys=["k"],
    volatility="volatile",
    description=f"A tool that takes {SLOW_SECONDS:g} s per call",
    select=_slow,
)
slow_stats = define_resource(
    "slow_stats",
    columns=[("peak", "bigint")],
    volatility="volatile",
    description="Peak concurrent calls of slow since the last read",
    select=_slow_stats,
    inline=True,
)


# -- five resources for EXPLAIN ------------------------------------------------------


class Customer(BaseModel):
    id: int
    name: str


class Order(BaseModel):
    id: int
    customer_id: int
    product_id: int


class Product(BaseModel):
    id: int
    title: str


class Review(BaseModel):
    product_id: int
    stars: int


class Shipment(BaseModel):
    order_id: int
    status: str


def _never(b: Bindings) -> list[dict]:
    return []


customer = define_resource(
    "customer", schema=Customer, keys=["id"], volatility="stable", select=_never,
    inline=True,
)
orders = define_resource(
    "orders", schema=Order, keys=["customer_id"], volatility="stable", select=_never,
    inline=True,
)
product = define_resource(
    "product", schema=Product, keys=["id"], volatility="stable", select=_never,
    inline=True,
)
review = define_resource(
    "review", schema=Review, keys=["product_id"], volatility="volatile", select=_never,
    inline=True,
)
shipment = define_resource(
    "shipment", schema=Shipment, keys=["order_id"], volatility="volatile", select=_never,
    inline=True,
)

JOIN_TABLES_SQL = [
    "CREATE TABLE customer (id bigint PRIMARY KEY, name text)",
    "CREATE TABLE orders (id bigint, customer_id bigint, product_id bigint)",
    "CREATE INDEX ON orders (customer_id)",
    "CREATE TABLE product (id bigint PRIMARY KEY, title text)",
    "CREATE TABLE review (product_id bigint, stars bigint)",
    "CREATE INDEX ON review (product_id)",
    "CREATE TABLE shipment (order_id bigint, status text)",
    "CREATE INDEX ON shipment (order_id)",
]

JOIN_SQL = (
    "SELECT c.name, o.id, p.title, r.stars, s.status"
    " FROM customer c"
    " JOIN orders o ON o.customer_id = c.id"
    " JOIN product p ON p.id = o.product_id"
    " JOIN review r ON r.product_id = p.id"
    " JOIN shipment s ON s.order_id = o.id"
    " WHERE c.id = 42 AND o.customer_id = 42 AND p.id IN (1, 2, 3)"
    " AND r.product_id IN (1, 2, 3) AND s.order_id = 7"
)

resources = [
    items, rows, big, big_plain, big_ttl, kept_rows, kept_stats, slow, slow_stats,
    customer, orders, product, review, shipment,
]
