"""define_resource's reliability options: inline, retries, rate; and what a resolver
may ask for (ctx) or raise (TransientError)."""

from __future__ import annotations

import pytest

from glove_scratchpad.resources import (
    Bindings,
    CallContext,
    ResourceDefinitionError,
    TransientError,
    define_resource,
)

COLUMNS = [("k", "bigint")]


def plain(b: Bindings) -> list[dict]:
    return []


async def coroutine(b: Bindings) -> list[dict]:
    return []


def with_ctx(b: Bindings, ctx: CallContext) -> list[dict]:
    return []


def test_where_each_resolver_runs_and_whether_it_takes_a_context():
    r = define_resource("r", columns=COLUMNS, volatility="volatile", select=plain,
                        insert=with_ctx, update=coroutine)
    assert not r.on_loop("select") and not r.on_loop("insert") and r.on_loop("update")
    assert r.takes_context("insert") and not r.takes_context("select")
    inline = define_resource("i", columns=COLUMNS, volatility="volatile", select=plain,
                             inline=True)
    assert inline.on_loop("select")


def test_retries_and_rate_are_checked_when_defined():
    r = define_resource("r", columns=COLUMNS, volatility="volatile", select=plain, retries=3,
                        rate=[10, 1])
    assert (r.retries, r.rate) == (3, (10, 1.0))
    for bad in ({"retries": -1}, {"retries": 11}, {"retries": True}, {"rate": (0, 1)},
                {"rate": (1, 0)}, {"rate": (1.5, 1)}, {"rate": "10/s"}):
        with pytest.raises(ResourceDefinitionError):
            define_resource("r", columns=COLUMNS, volatility="volatile", select=plain, **bad)


def test_a_transient_error_may_say_when_to_try_again():
    exc = TransientError("429", retry_after=2.5)
    assert (str(exc), exc.retry_after) == ("429", 2.5)
    ctx = CallContext("ann", 7, "SELECT 1", deadline=None, idempotency_key="k")
    assert ctx.remaining() is None
