"""The server's own functions the sidecar runs (``sql/own_functions.py``), through the wire:
``scratchpad.search`` is allowed wherever a function may be, a subquery too."""

from __future__ import annotations

from .fix_answers import answer


async def test_search_is_read_inside_a_subquery(server):
    found = await answer(server, "SELECT s.name FROM (SELECT * FROM scratchpad.search("
                                 "'a hundred items')) AS s WHERE s.kind = 'table'")
    assert ("items",) in found
