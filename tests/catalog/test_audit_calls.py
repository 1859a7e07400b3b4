"""The audit (``catalog/_audit.py``), through the wire: every call a statement makes is one
row of ``scratchpad.calls``: who, which statement, the resource, its verb and arguments,
its outcome and rows."""

from __future__ import annotations

import secrets

from ..sql.fix_answers import answer


async def test_a_reads_call_is_audited(server):
    mark = secrets.token_hex(6)
    statement = f"SELECT done, '{mark}' AS mark FROM slow WHERE seconds = 0"
    assert await answer(server, statement) == [(True, mark)]
    quoted = statement.replace("'", "''")
    rows = await answer(server, "SELECT user_name, resource, verb, arguments, status, rows, "
                                f"error FROM scratchpad.calls WHERE statement = '{quoted}'")
    assert rows == [("agent", "slow", "select", {"seconds": 0}, "ok", 1, None)]
