"""Every request ends as Postgres ends it, so that no client waits for ever: a SELECT
of no columns is described (a RowDescription of no fields) before its rows, and a
refused FunctionCall is answered with ErrorResponse, then ReadyForQuery.

Checked with psycopg, with a raw socket, and by a seeded fuzz of request sequences
whose every reply must end in one ReadyForQuery, with no DataRow undescribed.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    CommandComplete,
    CopyData,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    FunctionCall,
    NoData,
    ParameterDescription,
    Parse,
    ParseComplete,
    Query,
    ReadyForQuery,
    RowDescription,
    Sync,
)

from ..fidelity.rawclient import RawClient

_FUNCTION_CALL = FunctionCall(1598, (), (), 0)  # random(): any function, refused alike


async def _raw(server) -> RawClient:
    client = await RawClient.open("127.0.0.1", server.port)
    assert isinstance((await client.startup())[-1], ReadyForQuery)
    return client


@pytest.mark.parametrize("cursor", ["server", "client"])  # extended / simple protocol
async def test_a_select_of_no_columns_through_psycopg(dsn, cursor):
    factory = psycopg.AsyncClientCursor if cursor == "client" else psycopg.AsyncCursor
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True,
                                                     cursor_factory=factory) as conn:
        cur = await conn.execute("SELECT")
        assert cur.description == [] and await cur.fetchall() == [()]
        cur = await conn.execute("SELECT WHERE false")
        assert cur.description == [] and await cur.fetchall() == []
        cur = await conn.execute("SELECT 1 AS one")  # the connection goes on
        assert await cur.fetchall() == [(1,)]


async def test_a_select_of_no_columns_through_a_raw_socket(server):
    client = await _raw(server)
    try:
        client.send(Query("SELECT"))
        assert [type(m) for m in await client.until_ready()] == [
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
        client.send(Parse("", "SELECT", ()), Describe("S", ""), Bind("", "", (), (), ()),
                    Describe("P", ""), Execute("", 0), Sync())
        replies = await client.until_ready()
        assert [type(m) for m in replies] == [
            ParseComplete, ParameterDescription, RowDescription, BindComplete,
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
        assert replies[2].fields == replies[4].fields == ()
    finally:
        client.writer.close()


async def test_a_refused_function_call_is_answered_then_ready(server):
    client = await _raw(server)
    try:
        client.send(_FUNCTION_CALL)
        replies = await client.until_ready()
        assert [type(m) for m in replies] == [ErrorResponse, ReadyForQuery]
        assert replies[0].fields["C"] == "0A000" and replies[0].fields["H"]
        assert replies[1].status == "I"
        client.send(Query("SELECT 1"))  # and the connection serves on
        assert [type(m) for m in await client.until_ready()] == [
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
    finally:
        client.writer.close()


async def test_a_function_call_inside_a_transaction_fails_it_as_postgres_does(dsn, server):
    """psycopg cannot send a FunctionCall (libpq's PQfn is not exposed): the raw client
    does, inside a transaction block, and psycopg's own statements go on around it."""
    client = await _raw(server)
    try:
        client.send(Query("BEGIN"))
        await client.until_ready()
        client.send(_FUNCTION_CALL)
        replies = await client.until_ready()
        assert [type(m) for m in replies] == [ErrorResponse, ReadyForQuery]
        assert replies[-1].status == "E"
        client.send(Query("ROLLBACK"))
        assert (await client.until_ready())[-1].status == "I"
    finally:
        client.writer.close()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        assert await (await conn.execute("SELECT")).fetchall() == [()]


# Requests a client may send, each as the messages that make it one (ends in a Sync,
# a Query or a FunctionCall: each is answered up to one ReadyForQuery).
_REQUESTS = [
    [Query("SELECT")],
    [Query("SELECT WHERE false")],
    [Query("SELECT 1; SELECT")],
    [Query("SELEC")],
    [Query("")],
    [Query("BEGIN")],
    [Query("ROLLBACK")],
    [_FUNCTION_CALL],
    [CopyData(b"stray")],  # ignored, as Postgres ignores it outside COPY; then a Sync
    [Parse("", "SELECT", ()), Bind("", "", (), (), ()), Describe("P", ""), Execute("", 0)],
    [Parse("", "SELECT", ()), Describe("S", ""), Bind("", "", (), (), ()), Execute("", 1)],
    [Parse("", "SELEC", ()), Bind("", "", (), (), ()), Execute("", 0)],
    [Bind("", "nope", (), (), ()), Execute("", 0)],
    [_FUNCTION_CALL, Parse("", "SELECT", ())],  # a FunctionCall mid-request ends it
]
_ENDS = (Query, FunctionCall)


@pytest.mark.parametrize("seed", range(6))
async def test_fuzz_every_request_ends_in_one_ready_for_query(server, seed):
    rng = random.Random(seed)
    client = await _raw(server)
    try:
        for _ in range(25):
            messages = list(rng.choice(_REQUESTS))
            if not isinstance(messages[-1], _ENDS):
                messages.append(Sync())
            expected = sum(isinstance(m, (*_ENDS, Sync)) for m in messages)
            client.send(*messages)
            replies = []
            for _ in range(expected):
                replies += await client.until_ready()
            described = False
            for m in replies:  # no row comes before its description
                if isinstance(m, RowDescription):
                    described = True
                elif isinstance(m, DataRow):
                    assert described, (messages, replies)
                elif isinstance(m, CommandComplete | ErrorResponse | NoData):
                    described = False
        client.send(Query("ROLLBACK"), Query("SELECT"))
        await client.until_ready()
        assert [type(m) for m in await client.until_ready()] == [
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
    finally:
        client.writer.close()
