"""Kept-call resources and a served database that counts calls and injected rows
(tests/engine/test_cache.py, test_fast.py)."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine import sidecar as run_module
from glove_scratchpad.server.engine.guard import Limits

from ..fix_server import dsn, serving

BIG = 100_000
PLAIN = 5_000  # rows of ``plain``: no primary key, no key; kept, indexed for its lookups


class Counts:
    """Calls per resource, and rows sent with statements as parameters."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.injected = 0

    def call(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1


def resources(counts: Counts, n: int = BIG) -> list[Any]:
    rows = [{"id": i, "label": f"label {i}"} for i in range(1, n + 1)]

    def big(b: Bindings) -> list[dict[str, Any]]:
        counts.call("big")
        return rows

    def prices(b: Bindings) -> list[dict[str, Any]]:
        counts.call("prices")
        return [{"sku": i, "price": float(i)} for i in range(1, 51)]

    def price_write(changes: dict[str, Any], b: Bindings) -> list[dict[str, Any]]:
        counts.call("prices.update")
        return []

    def small(b: Bindings) -> list[dict[str, Any]]:
        counts.call("small")
        return [{"id": i, "label": f"s{i}"} for i in range(1, 61)]

    def item(b: Bindings) -> list[dict[str, Any]]:
        counts.call("item")
        i = b.one("id")
        return [{"id": i, "label": f"label {i}"}] if 1 <= i <= n else []

    def plain(b: Bindings) -> list[dict[str, Any]]:
        counts.call("plain")
        return [{"id": i, "label": f"label {i}", "a": i % 7, "b": i % 11, "c": i % 13}
                for i in range(1, PLAIN + 1)]

    def shelf(b: Bindings) -> list[dict[str, Any]]:
        counts.call("shelf")
        return [{"aisle": b.one("aisle"), "id": i, "label": f"label {i}"}
                for i in range(1, PLAIN + 1)]

    def quote(b: Bindings) -> list[dict[str, Any]]:
        counts.call("quote")
        return [{"sym": b.one("sym"), "price": 100.0 + counts.calls["quote"]}]

    return [
        define_resource("item", columns=[("id", "bigint"), ("label", "text")], keys=["id"],
                        volatility="immutable", select=item, inline=True),
        define_resource("quote", columns=[("sym", "text"), ("price", "double precision")],
                        keys=["sym"], volatility="stable", ttl=1, select=quote, inline=True),
        define_resource("big", columns=[("id", "bigint"), ("label", "text")],
                        primary_key=["id"], volatility="immutable", select=big, inline=True),
        define_resource("prices", columns=[("sku", "bigint"), ("price", "double precision")],
                        primary_key=["sku"], volatility="stable", ttl=2, select=prices,
                        update=price_write, inline=True),
        define_resource("small", columns=[("id", "bigint"), ("label", "text")],
                        primary_key=["id"], volatility="immutable", select=small,
                        inline=True),
        define_resource("plain", columns=[("id", "bigint"), ("label", "text"), ("a", "bigint"),
                                          ("b", "bigint"), ("c", "bigint")],
                        volatility="immutable", select=plain, inline=True),
        define_resource("shelf", columns=[("aisle", "bigint"), ("id", "bigint"),
                                          ("label", "text")], keys=["aisle"],
                        volatility="immutable", select=shelf, inline=True),
    ]


def counting(monkeypatch: pytest.MonkeyPatch) -> Counts:
    """Counts whose rows sent with statements are counted (the ``counts`` fixture)."""
    c = Counts()
    real = run_module.rows_params

    def counting(resource: Any, rows: Any) -> list[str]:
        rows = list(rows)
        c.injected += len(rows)
        return real(resource, rows)

    monkeypatch.setattr(run_module, "rows_params", counting)
    return c


_numbers = itertools.count()


def database_name() -> str:
    """A sidecar database of a test's own."""
    return f"test_cache_{next(_numbers)}"


@contextlib.asynccontextmanager
async def serve(sidecar: Any, counts: Counts, limits: Limits | None = None
                ) -> AsyncIterator[tuple[Database, str]]:
    """A server over ``resources(counts)``, with writes; its database and DSN."""
    db = await Database.create(resources(counts), writes=True, sidecar=sidecar,
                               database=database_name(),
                               limits=limits or Limits(cache_min_rows=20))
    async with serving(db, writes=True) as server:
        yield db, dsn(server)
    await db.close()

