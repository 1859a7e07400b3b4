"""The server's own functions as statements of their own (``sql/system_calls.py``), through
the wire: one is refused inside another statement, and its arguments are checked."""

from __future__ import annotations

from .fix_answers import refusal


async def test_a_system_function_inside_another_statement_is_refused(server):
    error = await refusal(server, "SELECT scratchpad.restage(1), 1")
    assert error.sqlstate == "0A000"
    assert "is a statement of its own" in (error.message_primary or "")
    assert error.message_hint.startswith("Call it alone")


async def test_restage_takes_a_transaction_id(server):
    error = await refusal(server, "SELECT scratchpad.restage('x')")
    assert error.sqlstate == "0A000"
    assert error.message_primary == (
        "scratchpad.restage() takes one transaction id: a number, or $1")
