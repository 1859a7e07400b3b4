"""Portals read in parts (``net/suspended.py``), through a raw socket: an Execute with a
row count answers that many rows and PortalSuspended, the next Execute goes on where it
stopped, and the last one ends with its command tag, as Postgres ends it."""

from __future__ import annotations

from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    CommandComplete,
    DataRow,
    Execute,
    Flush,
    Parse,
    ParseComplete,
    PortalSuspended,
    Query,
    ReadyForQuery,
    Sync,
)

from ..fidelity.rawclient import RawClient, types_of


async def test_an_execute_with_a_row_count_reads_a_part_at_a_time(server):
    client = await RawClient.open("127.0.0.1", server.port)
    try:
        await client.startup()
        client.send(Query("BEGIN"))
        await client.until_ready()
        client.send(Parse("", "SELECT name FROM items WHERE id <= 5 ORDER BY id"), Bind(),
                    Execute("", 2), Flush())
        first = await client.take(5)
        assert first[:2] == [ParseComplete(), BindComplete()]
        assert first[2:] == [DataRow([b"item 1"]), DataRow([b"item 2"]), PortalSuspended()]
        client.send(Execute("", 2), Flush())
        assert await client.take(3) == [DataRow([b"item 3"]), DataRow([b"item 4"]),
                                        PortalSuspended()]
        client.send(Execute("", 0), Sync())
        rest = await client.until_ready()
        assert rest[:2] == [DataRow([b"item 5"]), CommandComplete("SELECT 1")]
        assert types_of(rest[2:]) == ["ReadyForQuery"] and rest[-1] == ReadyForQuery("T")
    finally:
        await client.close()
