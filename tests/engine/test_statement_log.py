"""Statements' ends as events of the log (``engine/statement_log.py``), from a server process
in JSON mode: each statement's end says who ran it, its kind, the resources it called and
how many calls, its rows and its outcome (the SQLSTATE class), its text without its values."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import psycopg
import pytest

from ..fix_cli import cli_server
from ..fix_server import free_port, sidecar_database


async def _events(running: Any, marker: str, count: int) -> list[dict[str, Any]]:
    """The statement-end events whose text holds ``marker``, once the log has ``count``."""
    async with asyncio.timeout(10):
        while True:
            found = [e for e in map(json.loads, running.log)
                     if e.get("event") == "statement" and marker in e.get("query", "")]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.1)


async def test_each_statements_end_is_an_event(sidecar):
    port = free_port()
    own = await sidecar_database(sidecar, "test_engine_statement_log")
    async with cli_server("--port", str(port), "--sidecar-dsn", own,
                          "--log-format", "json") as running:
        dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute("SELECT title AS log_marker FROM web WHERE query = 'pg'")
            with pytest.raises(psycopg.errors.UndefinedColumn):
                await conn.execute("SELECT nope AS log_marker FROM web WHERE query = 'pg'")
        ok, failed = await _events(running, "log_marker", 2)
    assert (ok["user"], ok["kind"], ok["resources"], ok["calls"], ok["outcome"]) == (
        "agent", "SELECT", ["web"], 1, "00")
    assert ok["query"] == "SELECT title AS log_marker FROM web WHERE query = $1"
    assert (failed["outcome"], failed["calls"]) == ("42", 0)  # the SQLSTATE class
