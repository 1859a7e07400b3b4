"""A protocol portal's read in parts (``server/engine/portal_parts.py``), through a raw
socket: each Execute with a row count keeps only its own rows, so one whose rows alone
pass ``max_result_bytes`` is refused (54000) with how to read them, after the parts
before it were given, and the portal's call ends with it.

The parts' pages, timeouts, cancels, row limit and NOTICEs are tested with the client
drivers (tests/clients/test_portal_parts.py).
"""

from __future__ import annotations

from typing import Any

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    DataRow,
    ErrorResponse,
    Execute,
    Parse,
    ParseComplete,
    PortalSuspended,
    Query,
    ReadyForQuery,
    Sync,
)

from ..clients.fix_paged import Upstream, paged_resource
from ..fidelity.rawclient import RawClient
from ..fix_server import serving

BYTES = 2_000  # about a hundred rows of ``id, label``


def _ids(replies: list[Any]) -> list[int]:
    return [int(m.values[0]) for m in replies if isinstance(m, DataRow)]


async def test_an_execute_whose_rows_pass_max_result_bytes_is_refused_with_how_to_read_them(
        sidecar: Any) -> None:
    up = Upstream()
    db = await Database.create([paged_resource(up)], sidecar=sidecar,
                               database="test_portal_parts",
                               limits=Limits(max_result_bytes=BYTES))
    try:
        async with serving(db) as server:
            client = await RawClient.open("127.0.0.1", server.port)
            try:
                await client.startup()
                client.send(Query("BEGIN"))
                await client.until_ready()
                client.send(Parse("", "SELECT id, label FROM paged", ()),
                            Bind("c", "", (), (), ()), Execute("c", 10), Sync())
                replies = await client.until_ready()
                assert [type(m) for m in replies if not isinstance(m, DataRow)] == [
                    ParseComplete, BindComplete, PortalSuspended, ReadyForQuery]
                assert _ids(replies) == list(range(1, 11))

                client.send(Execute("c", 500), Sync())  # 500 rows: over 2,000 bytes
                replies = await client.until_ready()
                [error] = [m for m in replies if isinstance(m, ErrorResponse)]
                assert error.fields["C"] == "54000"
                assert error.fields["M"] == (
                    f"one Execute's rows come to over {BYTES} bytes, the most one result "
                    "may keep")
                assert error.fields["H"] == (
                    "Execute fewer rows at a time (a smaller fetch size), select fewer "
                    "columns, or narrow the query.")
                assert not _ids(replies)
                assert (up.calls, up.closed) == (1, 1)  # one call, ended with the error
                client.send(Query("ROLLBACK"))
                await client.until_ready()
            finally:
                client.writer.close()
    finally:
        await db.close()
