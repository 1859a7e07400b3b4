"""The server's log (``server/logs.py``) in JSON mode, from a server process: every line it
writes is one JSON object with its time, level, logger and message, the banner on stdout
too, and a statement's end carries its text with every constant a ``$n``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import psycopg

from ..fix_cli import cli_server
from ..fix_server import free_port, sidecar_database


async def _ended(running: Any, marker: str) -> dict[str, Any]:
    """The statement-end event whose text holds ``marker``, once the log has it."""
    async with asyncio.timeout(10):
        while True:
            for line in running.log:
                event = json.loads(line)
                if event.get("logger") == "glove_scratchpad.statements" and \
                        marker in json.dumps(event):
                    return event
            await asyncio.sleep(0.1)


async def test_json_lines_and_a_statements_end_without_its_values(sidecar):
    port = free_port()
    own = await sidecar_database(sidecar, "test_server_logs")
    async with cli_server("--port", str(port), "--sidecar-dsn", own,
                          "--log-format", "json") as running:
        dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute("SELECT 'hidden-value' AS logs_marker")
        event = await _ended(running, "logs_marker")
        assert "hidden-value" not in json.dumps(event)
        assert "$1" in json.dumps(event)
        for line in running.log + running.out:
            obj = json.loads(line)
            assert {"time", "level", "logger", "message"} <= obj.keys(), obj
