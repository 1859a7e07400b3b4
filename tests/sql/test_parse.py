"""Parsing (``sql/parse.py``), through the wire: a text of several statements is cut into
statements whose errors point into the client's whole text, and a run of operator
characters the lexer would read in quadratic time is refused before it is parsed."""

from __future__ import annotations

from .fix_answers import refusal


async def test_an_error_in_a_later_statement_points_into_the_whole_text(server):
    error = await refusal(server, "SELECT 1; SELEC 2")
    assert error.sqlstate == "42601"
    assert error.message_primary == 'syntax error at or near "SELEC"'
    assert error.statement_position == "11"  # of the whole text, not of "SELEC 2"


async def test_a_long_run_of_operator_characters_is_refused(server):
    error = await refusal(server, "SELECT 1 " + "+" * 5000 + " 1")
    assert error.sqlstate == "54001"
    assert "run of more than 512 operator characters" in (error.message_primary or "")
    assert "Put spaces between operators" in (error.message_hint or "")


async def test_a_later_statements_error_from_the_sidecar_points_into_the_whole_text(server):
    error = await refusal(server, "SELECT 1; SELECT nope FROM items WHERE id = 1")
    assert error.sqlstate == "42703"
    assert error.statement_position == "18"  # "nope" of the whole text
