"""EXPLAIN's text (``sql/explain.py``), through the wire: each resource reference gets a line
with its volatility, its keys and where their values come from, and its calls."""

from __future__ import annotations

from .fix_answers import answer


async def test_a_reference_of_no_keys_makes_one_call(server):
    lines = [line for (line,) in await answer(server, "EXPLAIN SELECT name FROM items "
                                                      "WHERE id = 3")]
    assert lines[0] == "Resource items (immutable, read): keys: none; calls: 1"


async def test_a_key_fed_by_a_join_says_one_call_per_distinct_value(server):
    lines = [line for (line,) in await answer(
        server, "EXPLAIN SELECT s.* FROM (VALUES (0), (0)) v(n) JOIN slow s "
                "ON s.seconds = v.n")]
    assert lines[0] == ("Resource slow AS s (volatile, read): keys: seconds from one call "
                        "per distinct v.n; calls: one call per distinct v.n")
