"""An MCP tool's write that gets no answer within the server's timeout, over the wire.

The tool (fixtures/shapes_server.py's ``sign``) has done its work when the call times
out: the write is journaled ``in doubt``, the client gets 08007 saying it may have
happened, and ``scratchpad.restage`` refuses it without ``force``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources.mcp import McpBridge, McpServerConfig
from glove_scratchpad.server import Database

from ..fix_server import dsn, rows, serving

SHAPES = Path(__file__).parent / "fixtures" / "shapes_server.py"


async def test_a_write_call_past_the_timeout_is_in_doubt(sidecar: Any) -> None:
    config = McpServerConfig(namespace="shapes", command=sys.executable, args=[str(SHAPES)],
                             timeout=0.5, include=["sign", "guest_book"])
    async with McpBridge([config]) as bridge:
        db = await Database.create(resources=bridge.resources, writes=True, sidecar=sidecar,
                                   database="mcp_in_doubt")
        try:
            async with serving(db, writes=True) as server, \
                    await psycopg.AsyncConnection.connect(dsn(server), autocommit=True) as conn:
                with pytest.raises(psycopg.errors.TransactionResolutionUnknown) as info:
                    await conn.execute("INSERT INTO shapes_sign (name, seconds) VALUES "
                                       "('ann', 3)")
                message = info.value.diag.message_primary or ""
                assert 'MCP tool "sign" of server "shapes": the call was sent and no answer ' \
                    "came within 0.5 s, so the write may have happened" in message
                assert "try again" not in f"{message} {info.value.diag.message_hint}".lower()
                # The server got the call and made the write.
                assert await rows(conn, "SELECT name FROM shapes_guest_book") == [("ann",)]
                [(txid, status, error)] = await rows(
                    conn, "SELECT txid, status, error FROM scratchpad.journal")
                assert status == "in doubt" and error in message
                assert re.search(rf"restage\({txid}, force => true\)",
                                 info.value.diag.message_hint or "")
                with pytest.raises(psycopg.errors.InvalidTransactionState):
                    await conn.execute(f"SELECT scratchpad.restage({txid})")
        finally:
            await db.close()
