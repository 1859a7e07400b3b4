"""Spans (``sql/spans.py``): a relation's name is found in the text whatever its spelling, so
the rewrite replaces exactly it; through the wire."""

from __future__ import annotations

from .fix_answers import answer


async def test_a_quoted_name_after_a_comment_is_read_as_the_resource(server):
    assert await answer(server, 'SELECT name FROM/**/"items"  WHERE "items".id = 2') == [
        ("item 2",)]
    assert await answer(server, 'SELECT "name" FROM "items"--a comment\nWHERE id = 3') == [
        ("item 3",)]
