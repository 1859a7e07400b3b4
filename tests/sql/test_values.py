"""Pushed-down values (``sql/values.py``), through the wire: an expression that reads no row
(an operator over literals, a subquery that stands alone) gives a required key its value."""

from __future__ import annotations

from .fix_answers import answer


async def test_an_expression_over_literals_is_a_value(server):
    assert await answer(server, "SELECT seconds, done FROM slow WHERE seconds = 0 + 0") == [
        (0.0, True)]


async def test_a_subquery_that_stands_alone_is_a_value(server):
    assert await answer(server, "SELECT done FROM slow WHERE seconds = (SELECT 0)") == [
        (True,)]
    lines = [line for (line,) in await answer(
        server, "EXPLAIN SELECT * FROM slow WHERE seconds = (SELECT 0)")]
    assert lines[0] == "Resource slow (volatile, read): keys: seconds from (SELECT 0); calls: 1"
