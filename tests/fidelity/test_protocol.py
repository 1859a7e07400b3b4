"""Protocol-level behaviour, with a raw client built from the project's own codec.

Where the virtual database should behave exactly like Postgres, the same
messages are also sent to the sidecar itself (a temporary ``items`` table with
the same rows as the served ``items`` resource) and the two message streams
are compared, message by message.
"""

from __future__ import annotations

from typing import Any

import pytest

from glove_scratchpad.wire import (
    PROTOCOL_3_2,
    AuthenticationOk,
    BackendKeyData,
    Bind,
    BindComplete,
    Close,
    CommandComplete,
    DataRow,
    Describe,
    EmptyQueryResponse,
    ErrorResponse,
    Execute,
    Flush,
    GSSENCRequest,
    GSSENCResponse,
    NegotiateProtocolVersion,
    NoData,
    NoticeResponse,
    ParameterDescription,
    ParameterStatus,
    Parse,
    ParseComplete,
    PortalSuspended,
    Query,
    ReadyForQuery,
    RowDescription,
    SSLRequest,
    SSLResponse,
    Sync,
)

from .rawclient import RawClient, types_of

ITEMS_DDL = ("CREATE TEMPORARY TABLE items AS SELECT g::bigint AS id, 'item ' || g AS name,"
             " (g * 1.5)::float8 AS price FROM generate_series(1, 100) AS g")


async def server_client(server: Any) -> RawClient:
    c = await RawClient.open("127.0.0.1", server.port)
    out = await c.startup()
    assert isinstance(out[-1], ReadyForQuery), out
    return c


async def postgres_client(sidecar: Any) -> RawClient:
    c = await RawClient.open(sidecar.host, sidecar.port)
    out = await c.startup(user=sidecar.user, database="test_wire")
    assert isinstance(out[-1], ReadyForQuery), out
    c.send(Query(ITEMS_DDL))
    assert isinstance((await c.until_ready())[-2], CommandComplete)
    return c


def summary(msgs: list[Any]) -> list[Any]:
    """What must match Postgres: kinds, tags, SQLSTATEs, statuses, columns and values."""
    out: list[Any] = []
    for m in msgs:
        if isinstance(m, NoticeResponse | ParameterStatus):
            continue  # our notices say what a resource did; settings differ by design
        if isinstance(m, CommandComplete):
            out.append(("CommandComplete", m.tag))
        elif isinstance(m, ErrorResponse):
            out.append(("ErrorResponse", m.fields.get("S"), m.fields.get("C")))
        elif isinstance(m, ReadyForQuery):
            out.append(("ReadyForQuery", m.status))
        elif isinstance(m, RowDescription):
            out.append(("RowDescription", tuple((f.name, f.type_oid, f.type_size,
                                                 f.type_modifier, f.format) for f in m.fields)))
        elif isinstance(m, DataRow):
            out.append(("DataRow", m.values))
        elif isinstance(m, ParameterDescription):
            out.append(("ParameterDescription", m.type_oids))
        else:
            out.append(type(m).__name__)
    return out


@pytest.fixture
async def pair(server, sidecar):
    srv, pg = await server_client(server), await postgres_client(sidecar)
    yield srv, pg
    await srv.close()
    await pg.close()


async def exchange(pair: tuple[RawClient, RawClient], *msgs: Any) -> list[Any]:
    """Send the same messages to both; their summaries must be equal; returns ours."""
    results = []
    for c in pair:
        c.send(*msgs)
        results.append(await c.until_ready())
    ours, theirs = (summary(r) for r in results)
    assert ours == theirs, f"\nserver:   {ours}\npostgres: {theirs}"
    return results[0]


# -- start-up ------------------------------------------------------------------------


async def test_ssl_request_is_answered_n_then_startup_works(server):
    c = await RawClient.open("127.0.0.1", server.port)
    try:
        c.send(SSLRequest())
        assert await c.recv() == SSLResponse(False)
        assert c.conn.trailing_data == b""
        out = await c.startup()
        assert isinstance(out[0], AuthenticationOk)
        assert any(isinstance(m, BackendKeyData) for m in out)
        assert out[-1] == ReadyForQuery("I")
        c.send(Query("SELECT 41 + 1"))
        assert next(m for m in await c.until_ready() if isinstance(m, DataRow)).values == (b"42",)
    finally:
        await c.close()


@pytest.mark.parametrize("order", [(GSSENCRequest, SSLRequest), (SSLRequest, GSSENCRequest)])
async def test_gssenc_and_ssl_requests_each_get_one_byte(server, order):
    c = await RawClient.open("127.0.0.1", server.port)
    try:
        for request in order:
            c.send(request())
            answer = await c.recv()
            assert answer == (GSSENCResponse(False) if request is GSSENCRequest
                              else SSLResponse(False))
            assert c.conn.trailing_data == b""  # one byte, nothing after it
        out = await c.startup()
        assert out[-1] == ReadyForQuery("I")
    finally:
        await c.close()


async def test_protocol_3_2_is_negotiated_down_to_3_0(server):
    c = await RawClient.open("127.0.0.1", server.port)
    try:
        out = await c.startup(protocol_version=PROTOCOL_3_2)
        assert out[0] == NegotiateProtocolVersion(0, ())
        assert isinstance(out[1], AuthenticationOk)
        key = next(m for m in out if isinstance(m, BackendKeyData))
        assert len(key.secret_key) == 4  # 3.0's key length, as negotiated
        assert out[-1] == ReadyForQuery("I")
    finally:
        await c.close()


async def test_unknown_protocol_option_is_reported(server):
    c = await RawClient.open("127.0.0.1", server.port)
    try:
        out = await c.startup(**{"_pq_.x": "1", "_pq_.y": "2"})
        assert out[0] == NegotiateProtocolVersion(0, ("_pq_.x", "_pq_.y"))
        assert out[-1] == ReadyForQuery("I")
        c.send(Query("SELECT 1"))
        assert (await c.until_ready())[-1] == ReadyForQuery("I")
    finally:
        await c.close()


async def test_wrong_database_is_3d000_with_a_hint(server):
    c = await RawClient.open("127.0.0.1", server.port)
    try:
        out = await c.startup(database="nope")
        err = out[-1]
        assert isinstance(err, ErrorResponse)
        assert err.fields["S"] == "FATAL" and err.fields["C"] == "3D000"
        assert "nope" in err.fields["M"] and "scratchpad" in err.fields["H"]
        assert await c.closed()
    finally:
        await c.close()


# -- simple query --------------------------------------------------------------------


@pytest.mark.parametrize("sql", ["", " ", ";", " ; ; ", "-- only a comment"])
async def test_empty_query_response(pair, sql):
    out = await exchange(pair, Query(sql))
    assert types_of(out) == ["EmptyQueryResponse", "ReadyForQuery"]


async def test_empty_query_extended(pair):
    out = await exchange(pair, Parse("", ""), Bind(), Describe("P"), Execute(), Sync())
    assert EmptyQueryResponse() in out and NoData() in out


async def test_several_statements_each_complete_and_stop_at_the_first_error(pair):
    out = await exchange(pair, Query(
        "SELECT 1 AS one; SELECT name FROM items WHERE id = 2; SELECT nope FROM items; "
        "SELECT 3"))
    assert [m.tag for m in out if isinstance(m, CommandComplete)] == ["SELECT 1", "SELECT 1"]
    assert types_of(out)[-2:] == ["ErrorResponse", "ReadyForQuery"]
    out = await exchange(pair, Query("SELECT 1/0; SELECT 2"))
    assert types_of(out) == ["RowDescription", "ErrorResponse", "ReadyForQuery"] or \
        types_of(out) == ["ErrorResponse", "ReadyForQuery"]


async def test_transaction_status_and_commit_of_a_failed_transaction(pair):
    out = await exchange(pair, Query("BEGIN"))
    assert out[-1] == ReadyForQuery("T")
    out = await exchange(pair, Query("SELECT name FROM items WHERE id = 1"))
    assert out[-1] == ReadyForQuery("T")
    out = await exchange(pair, Query("SELECT nope FROM items"))
    assert out[-1] == ReadyForQuery("E")
    out = await exchange(pair, Query("SELECT 1"))
    assert out[0].fields["C"] == "25P02" and out[-1] == ReadyForQuery("E")
    out = await exchange(pair, Query("COMMIT"))
    assert CommandComplete("ROLLBACK") in out and out[-1] == ReadyForQuery("I")
    # The same in the extended protocol. (Postgres reports an unknown column at Parse;
    # the server checks names when the statement is described or run, so its Parse and
    # Bind complete first: the error and the state after it are the same.)
    await exchange(pair, Query("BEGIN"))
    for c in pair:
        c.send(Parse("", "SELECT nope FROM items"), Bind(), Execute(), Sync())
        out = [m for m in await c.until_ready() if isinstance(m, ErrorResponse | ReadyForQuery)]
        assert out[0].fields["C"] == "42703" and out[-1] == ReadyForQuery("E")
    out = await exchange(pair, Parse("", "COMMIT"), Bind(), Execute(), Sync())
    assert CommandComplete("ROLLBACK") in out and out[-1] == ReadyForQuery("I")


async def test_error_in_bind_inside_a_transaction_fails_it(pair):
    await exchange(pair, Query("BEGIN"))
    out = await exchange(pair, Bind("", "no_such_statement"), Execute(), Sync())
    assert out[0].fields["C"] == "26000" and out[-1] == ReadyForQuery("E")
    await exchange(pair, Query("ROLLBACK"))


# -- extended query ------------------------------------------------------------------


async def test_runs_sent_in_one_piece_answer_as_postgres_does(pair):
    """Bind, Describe, Execute and Sync sent together (a portal run, as libpq sends each
    execution): its errors end it where Postgres ends it, and the next run goes on."""
    await exchange(pair, Parse("one", "SELECT id, name FROM items WHERE id = $1", (20,)),
                   Sync())
    rest = (Describe("P"), Execute(), Sync())
    out = await exchange(pair, Bind("", "one", (), (b"3",), ()), *rest)
    assert types_of(out) == ["BindComplete", "RowDescription", "DataRow", "CommandComplete",
                             "ReadyForQuery"]
    out = await exchange(pair, Bind("", "none", (), (), ()), *rest)  # no such statement
    assert out[0].fields["C"] == "26000" and out[-1] == ReadyForQuery("I")
    out = await exchange(pair, Bind("", "one", (), (), ()), *rest)  # a parameter short
    assert out[0].fields["C"] == "08P01"
    await exchange(pair, Bind("", "one", (), (b"4",), ()), Execute(), Sync())


async def test_execute_with_max_rows_suspends_and_resumes(pair):
    out = await exchange(pair, Parse("", "SELECT id FROM items WHERE id <= 20 ORDER BY id"),
                         Bind(), Execute("", 10), Execute("", 10), Execute("", 10),
                         Execute("", 10), Sync())
    assert types_of(out).count("PortalSuspended") == 2
    assert [m.tag for m in out if isinstance(m, CommandComplete)] == ["SELECT 0", "SELECT 0"]
    out = await exchange(pair, Parse("", "SELECT id FROM items WHERE id <= 15 ORDER BY id"),
                         Bind("", "", (), (), (1,)), Execute("", 10), Execute("", 10), Sync())
    assert [m.tag for m in out if isinstance(m, CommandComplete)] == ["SELECT 5"]
    rows = [m for m in out if isinstance(m, DataRow)]
    assert [int.from_bytes(r.values[0], "big") for r in rows] == list(range(1, 16))
    # Max rows beyond the result, and 0 (no limit) after a partial fetch.
    out = await exchange(pair, Parse("", "SELECT id FROM items WHERE id <= 3 ORDER BY id"),
                         Bind(), Execute("", 2), Execute("", 0), Sync())
    assert [m.tag for m in out if isinstance(m, CommandComplete)] == ["SELECT 1"]


async def test_portal_survives_sync_inside_a_transaction_only(pair):
    await exchange(pair, Query("BEGIN"))
    out = await exchange(pair, Parse("", "SELECT id FROM items WHERE id <= 7 ORDER BY id"),
                         Bind("cur"), Execute("cur", 5), Sync())
    assert types_of(out)[-2:] == ["PortalSuspended", "ReadyForQuery"]
    out = await exchange(pair, Execute("cur", 5), Sync())
    assert [m.tag for m in out if isinstance(m, CommandComplete)] == ["SELECT 2"]
    await exchange(pair, Query("COMMIT"))
    out = await exchange(pair, Execute("cur", 5), Sync())
    assert out[0].fields["C"] == "34000"


async def test_named_statements_and_portals(pair):
    sql = "SELECT name FROM items WHERE id = $1"
    out = await exchange(pair, Parse("s1", sql), Bind("p1", "s1", (), (b"7",)),
                         Bind("p2", "s1", (), (b"8",)), Execute("p2"), Execute("p1"), Sync())
    assert [m.values for m in out if isinstance(m, DataRow)] == [(b"item 8",), (b"item 7",)]
    # The statement outlives the Sync; the portals do not.
    out = await exchange(pair, Bind("p3", "s1", (), (b"9",)), Execute("p3"), Sync())
    assert [m.values for m in out if isinstance(m, DataRow)] == [(b"item 9",)]
    out = await exchange(pair, Execute("p1"), Sync())
    assert out[0].fields["C"] == "34000"
    out = await exchange(pair, Parse("s1", sql), Sync())
    assert out[0].fields["C"] == "42P05"
    # After an error, everything up to Sync is skipped.
    out = await exchange(pair, Parse("s1", sql), Bind("p4", "s1", (), (b"1",)), Execute("p4"),
                         Sync())
    assert types_of(out) == ["ErrorResponse", "ReadyForQuery"]
    out = await exchange(pair, Bind("", "s1", (), (b"1", b"2")), Sync())
    assert out[0].fields["C"] == "08P01"  # wrong number of parameters


async def test_describe_statement_infers_parameter_types(pair):
    out = await exchange(pair, Parse("d1", "SELECT name, price FROM items WHERE id = $1 "
                                           "AND price > $2"), Describe("S", "d1"), Sync())
    assert ParameterDescription((20, 701)) in out
    out = await exchange(pair, Parse("d2", "SELECT name FROM items WHERE id = $1", (23,)),
                         Describe("S", "d2"), Sync())
    assert ParameterDescription((23,)) in out
    out = await exchange(pair, Parse("d3", "SELECT $1::numeric AS n, $2 || 'x' AS t"),
                         Describe("S", "d3"), Sync())
    assert ParameterDescription((1700, 25)) in out
    out = await exchange(pair, Parse("d4", "SET application_name = 'x'"), Describe("S", "d4"),
                         Sync())
    assert types_of(out)[:3] == ["ParseComplete", "ParameterDescription", "NoData"]


@pytest.mark.parametrize("formats", [(), (0,), (1,), (0, 1, 0), (1, 0, 1)])
async def test_describe_portal_follows_the_bind_result_formats(pair, formats):
    out = await exchange(pair, Parse("", "SELECT id, name, price FROM items WHERE id IN (3, 4) "
                                         "ORDER BY id"),
                         Bind("", "", (), (), formats), Describe("P"), Execute(), Sync())
    desc = next(m for m in out if isinstance(m, RowDescription))
    want = [formats[0] if len(formats) == 1 else formats[i] if formats else 0 for i in range(3)]
    assert [f.format for f in desc.fields] == want


async def test_close_and_flush(pair):
    for c in pair:  # Flush: replies so far arrive without a Sync
        c.send(Parse("f1", "SELECT id FROM items WHERE id = 5"), Bind("fp", "f1"), Flush())
        assert [await c.recv(), await c.recv()] == [ParseComplete(), BindComplete()]
        c.send(Execute("fp"), Flush())
        msgs = [await c.recv(), await c.recv()]
        assert isinstance(msgs[0], DataRow) and msgs[1] == CommandComplete("SELECT 1")
        c.send(Sync())
        assert await c.until_ready() == [ReadyForQuery("I")]
    out = await exchange(pair, Close("S", "f1"), Close("S", "never"), Close("P", "never"),
                         Sync())
    assert types_of(out) == ["CloseComplete"] * 3 + ["ReadyForQuery"]
    out = await exchange(pair, Describe("S", "f1"), Sync())
    assert out[0].fields["C"] == "26000"
    out = await exchange(pair, Parse("f2", "SELECT 1"), Bind("fp2", "f2"), Close("P", "fp2"),
                         Execute("fp2"), Sync())
    assert out[-2].fields["C"] == "34000"
    assert PortalSuspended not in map(type, out)
