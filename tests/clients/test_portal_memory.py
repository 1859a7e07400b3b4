"""A portal read in parts holds only the rows ahead of it: its Executes together may give
far more than ``max_result_bytes``, which bounds the rows one read keeps, not the rows a
client reads a part at a time (a SCROLL cursor's, kept for FETCH BACKWARD, count whole).
"""

from __future__ import annotations

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.wire import (
    Bind,
    CommandComplete,
    DataRow,
    ErrorResponse,
    Execute,
    Parse,
    PortalSuspended,
    Query,
    Sync,
)

from ..fidelity.rawclient import RawClient
from ..fix_server import serving
from .fix_paged import ROWS, Upstream, paged_resource

BYTES = 60_000  # about 2,700 rows of ``id, label``: a quarter of the resource's


async def test_a_portal_read_in_parts_keeps_only_the_rows_ahead(sidecar):
    up = Upstream()
    db = await Database.create([paged_resource(up)], sidecar=sidecar,
                               database="test_portal_memory",
                               limits=Limits(max_result_bytes=BYTES))
    try:
        async with serving(db) as server:
            client = await RawClient.open("127.0.0.1", server.port)
            try:
                await client.startup()
                client.send(Query("BEGIN"))
                await client.until_ready()
                client.send(Parse("", "SELECT id, label FROM paged", ()),
                            Bind("c", "", (), (), ()), Execute("c", 500), Sync())
                ids: list[int] = []
                replies = await client.until_ready()
                while True:
                    assert not [m for m in replies if isinstance(m, ErrorResponse)]
                    ids += [int(m.values[0]) for m in replies if isinstance(m, DataRow)]
                    if any(isinstance(m, CommandComplete) for m in replies):
                        break
                    assert any(isinstance(m, PortalSuspended) for m in replies)
                    client.send(Execute("c", 500), Sync())
                    replies = await client.until_ready()
                assert ids == list(range(1, ROWS + 1))
                assert up.calls == 1
                # A SCROLL cursor keeps every row it read: the same rows are refused.
                client.send(Query("DECLARE s SCROLL CURSOR FOR SELECT id, label FROM paged;"
                                  " FETCH ALL s"))
                replies = await client.until_ready()
                assert [m.fields["C"] for m in replies if isinstance(m, ErrorResponse)] == [
                    "54000"]
            finally:
                client.writer.close()
    finally:
        await db.close()

