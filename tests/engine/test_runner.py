"""The statement runner, through the wire: every way a statement runs (a simple Query,
Bind/Execute read message by message, a portal run awaited in the task and one
answered in the transports' callbacks) ends it once, counted in the metrics with the
SQLSTATE class of its outcome and logged with the next number of its session."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest

from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.engine.runner import Runner

from ..fix_metrics import counted
from .fix_cache import serve


@pytest.fixture
def ways(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many statements each way into the runner took (and did not decline)."""
    taken = {"run": 0, "fast_read": 0, "answer_read": 0}
    for name in taken:
        real = getattr(Runner, name)

        def counting(self: Runner, *args: Any, _real: Any = real, _name: str = name) -> Any:
            got = _real(self, *args)
            taken[_name] += got is not None
            return got

        monkeypatch.setattr(Runner, name, counting)
    return taken


async def test_every_way_in_ends_a_statement_once_counted_and_logged(
        sidecar, counts, ways, monkeypatch, caplog):
    sample = counted(monkeypatch)
    before = sample("glove_statements_total", kind="SELECT", outcome="00")
    failed_before = sample("glove_statements_total", kind="SELECT", outcome="22")
    caplog.set_level(logging.WARNING, logger="glove_scratchpad.statements")
    # Every statement is slow: each end is a line of the log, with its number.
    async with serve(sidecar, counts, Limits(cache_min_rows=20, slow_statement_s=0.0)) as (
            _, dsn):
        conn = await asyncpg.connect(dsn)
        try:
            assert await conn.execute("SELECT label FROM item WHERE id = 2") == "SELECT 1"
            lookup = await conn.prepare("SELECT label FROM item WHERE id = $1")
            assert await lookup.fetch(3) == [("label 3",)]  # the full path: compiled
            assert await lookup.fetch(3) == [("label 3",)]  # answered in callbacks
            assert await lookup.fetch(4) == [("label 4",)]  # handed to the task: a call
            assert await lookup.fetchval(3) == "label 3"  # message by message: ``run``
            with pytest.raises(asyncpg.DataError):
                await conn.execute("SELECT label FROM item WHERE id = 'seven'")  # a Query
        finally:
            await conn.close()
    assert ways == {"run": 4, "fast_read": 1, "answer_read": 1}, ways
    ends = [r.event for r in caplog.records if getattr(r, "event", {}).get("kind") == "SELECT"]
    assert [e["outcome"] for e in ends] == ["00"] * 5 + ["22"]
    assert counts.calls == {"item": 3}  # 2, 3 and 4: each called once
    # One end each, numbered in the order they ran, none twice, none skipped.
    numbers = [int(e["statement"].rsplit(":", 1)[1]) for e in ends]
    assert numbers == list(range(numbers[0], numbers[0] + 6))
    assert sample("glove_statements_total", kind="SELECT", outcome="00") - before == 5
    assert sample("glove_statements_total", kind="SELECT", outcome="22") - failed_before == 1
