"""FETCH through the extended protocol, message by message, compared with a plain
Postgres: the same Parse, Bind, Describe and Execute sent through a raw socket to the
server (over the paged resource) and to the sidecar (over its own table of the same rows)
give the same replies: a Describe of a FETCH from an unknown cursor is NoData (the error
is Execute's, 34000), and a BINARY cursor's rows come as text to a Bind that asks no
result format."""

from __future__ import annotations

from typing import Any

from glove_scratchpad.wire import (
    Bind,
    Describe,
    ErrorResponse,
    Execute,
    Parse,
    Query,
    ReadyForQuery,
    RowDescription,
    Sync,
)

from ..fidelity.rawclient import RawClient
from ..fix_server import serving
from .fix_cursors import Pages, paged_resources
from .test_differential import ROWS, reference  # noqa: F401  (the fixture)

FETCH_UNKNOWN = [Parse("", "FETCH 2 FROM nope", ()), Describe("S", ""), Bind("", "", (), (), ()),
                 Describe("P", ""), Execute("", 0), Sync()]


def _fetch(sql: str, formats: tuple[int, ...]) -> list[Any]:
    return [Parse("", sql, ()), Bind("", "", (), (), formats), Describe("P", ""),
            Execute("", 0), Sync()]


STEPS = [
    [Query("BEGIN")],
    FETCH_UNKNOWN,
    [Query("ROLLBACK")],
    FETCH_UNKNOWN,
    [Query("BEGIN")],
    [Query("DECLARE b BINARY SCROLL CURSOR FOR SELECT id, label FROM items WHERE id < 6")],
    [Parse("f", "FETCH 2 FROM b", ()), Describe("S", "f"), Sync()],
    _fetch("FETCH 2 FROM b", ()),        # no format: text, though the cursor is BINARY
    _fetch("FETCH 2 FROM b", (1,)),      # binary, as the Bind asks
    _fetch("FETCH BACKWARD 3 FROM b", (0, 1)),
    [Query("FETCH FIRST FROM b")],       # the simple protocol: the cursor's BINARY
    [Query("ROLLBACK")],
]


def _shown(msg: Any) -> Any:
    """A reply as compared: an error by its SQLSTATE and message; a RowDescription by its
    names, types and formats (the table oids differ)."""
    if isinstance(msg, ErrorResponse):
        return ("error", msg.fields["C"], msg.fields["M"])
    if isinstance(msg, RowDescription):
        return ("row description", [(f.name, f.type_oid, f.format) for f in msg.fields])
    return msg


async def _replies(client: RawClient) -> list[Any]:
    out = []
    for step in STEPS:
        client.send(*step)
        out.append([_shown(m) for m in await client.until_ready()])
    return out


async def test_fetch_through_the_extended_protocol_as_postgres(
        make_db: Any, sidecar: Any, reference: str) -> None:  # noqa: F811
    db = await make_db(paged_resources(Pages(ROWS)))
    async with serving(db, writes=True) as server:
        ours = await RawClient.open("127.0.0.1", server.port)
        try:
            assert isinstance((await ours.startup())[-1], ReadyForQuery)
            got = await _replies(ours)
        finally:
            ours.writer.close()
    name = dict(kv.split("=", 1) for kv in reference.split())["dbname"]
    postgres = await RawClient.open(sidecar.host, sidecar.port)
    try:
        assert isinstance((await postgres.startup(user=sidecar.user, database=name))[-1],
                          ReadyForQuery)
        want = await _replies(postgres)
    finally:
        postgres.writer.close()
    assert got == want
