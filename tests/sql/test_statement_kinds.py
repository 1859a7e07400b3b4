"""Statement kinds (``sql/statement_kinds.py``), through the wire: what connection pools send
runs, and a refused kind names itself in its message and says what to do instead."""

from __future__ import annotations

from .fix_answers import answer, refusal


async def test_what_pools_send_between_clients_runs(server):
    assert await answer(server, "DISCARD ALL") == [("DISCARD ALL",)]
    assert await answer(server, "UNLISTEN *") == [("UNLISTEN",)]


async def test_a_refused_kind_names_itself_and_the_next_step(server):
    error = await refusal(server, "VACUUM")
    assert error.sqlstate == "42501"
    assert error.message_primary == "VACUUM is not allowed: the server maintains its own database"
    assert error.message_hint == "Nothing to do: resources hold no rows between statements."
