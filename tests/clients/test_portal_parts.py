"""Portals read in parts through a raw socket and asyncpg: Execute with a row count over
a 10,000-row paged resource asks its upstream for the pages of those rows alone, the
next Execute goes on, and the portal ends (its call closed) as Postgres ends portals.

The errors are Postgres's: the same messages sent to the sidecar itself, over a table of
its own, give the same SQLSTATEs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.wire import (
    BackendKeyData,
    Bind,
    BindComplete,
    CancelRequest,
    Close,
    CommandComplete,
    DataRow,
    ErrorResponse,
    Execute,
    NoticeResponse,
    Parse,
    ParseComplete,
    PortalSuspended,
    Query,
    ReadyForQuery,
    Sync,
)

from ..fidelity.rawclient import RawClient
from ..fix_server import serving
from .fix_paged import PAGE, ROWS, Upstream, paged_resource, pages_for

SELECT = "SELECT id, label, call FROM paged"


async def _raw(port: int, host: str = "127.0.0.1", **startup: Any) -> RawClient:
    client = await RawClient.open(host, port)
    started = await client.startup(**startup)
    assert isinstance(started[-1], ReadyForQuery)
    key = next(m for m in started if isinstance(m, BackendKeyData))
    client.key = (key.process_id, key.secret_key)  # type: ignore[attr-defined]
    return client


def _ids(replies: list[Any]) -> list[int]:
    return [int(m.values[0]) for m in replies if isinstance(m, DataRow)]


def _kinds(replies: list[Any]) -> list[type]:
    return [type(m) for m in replies if not isinstance(m, DataRow)]


def _codes(replies: list[Any]) -> list[str]:
    return [m.fields["C"] for m in replies if isinstance(m, ErrorResponse)]


async def test_execute_with_a_limit_suspends_and_asks_for_its_pages_alone(paged):
    up = paged.upstream
    client = await _raw(paged.port)
    try:
        client.send(Query("BEGIN"))
        await client.until_ready()
        client.send(Parse("s", SELECT, ()), Bind("c", "s", (), (), ()), Execute("c", 10), Sync())
        replies = await client.until_ready()
        assert _kinds(replies) == [ParseComplete, BindComplete, PortalSuspended, ReadyForQuery]
        assert _ids(replies) == list(range(1, 11))
        assert replies[-1].status == "T"
        assert (up.calls, up.pages) == (1, [0])  # one call, one page of PAGE rows

        client.send(Execute("c", 30), Sync())  # rows 11 to 40: the second page too
        replies = await client.until_ready()
        assert _kinds(replies) == [PortalSuspended, ReadyForQuery]
        assert _ids(replies) == list(range(11, 41))
        assert (up.calls, up.pages) == (1, [0, 1])

        client.send(Execute("c", 0), Sync())  # the rest
        replies = await client.until_ready()
        assert _ids(replies) == list(range(41, ROWS + 1))
        assert _kinds(replies) == [CommandComplete, ReadyForQuery]
        assert replies[-2].tag == f"SELECT {ROWS - 40}"  # the rows of this Execute
        assert (up.calls, len(up.pages)) == (1, ROWS // PAGE)
        # one call: every row carries its number
        assert len({m.values[2] for m in replies if isinstance(m, DataRow)}) == 1

        client.send(Execute("c", 10), Sync())  # at its end: no row, and its tag says so
        replies = await client.until_ready()
        assert _kinds(replies) == [CommandComplete, ReadyForQuery]
        assert replies[0].tag == "SELECT 0"
        client.send(Query("COMMIT"))
        await client.until_ready()
    finally:
        client.writer.close()


async def test_a_filter_reads_the_pages_of_the_rows_it_keeps_and_an_order_reads_all(paged):
    """A WHERE that keeps one row in seven reads the pages of seventy rows for ten; an
    ORDER BY needs every row before the first: that read is made whole, and paged."""
    up = paged.upstream
    client = await _raw(paged.port)
    try:
        client.send(Query("BEGIN"))
        await client.until_ready()
        client.send(Parse("", "SELECT id FROM paged WHERE id % 7 = 0", ()),
                    Bind("c", "", (), (), ()), Execute("c", 10), Sync())
        replies = await client.until_ready()
        assert _ids(replies) == [7 * i for i in range(1, 11)]
        assert up.pages == list(range(pages_for(70)))
        client.send(Execute("c", 10), Sync())
        assert _ids(await client.until_ready()) == [7 * i for i in range(11, 21)]
        assert up.pages == list(range(pages_for(140)))

        up.reset()
        client.send(Parse("", "SELECT id FROM paged ORDER BY id DESC", ()),
                    Bind("d", "", (), (), ()), Execute("d", 5), Sync())
        replies = await client.until_ready()
        assert _ids(replies) == list(range(ROWS, ROWS - 5, -1))
        assert _kinds(replies) == [ParseComplete, BindComplete, PortalSuspended,
                                   ReadyForQuery]
        assert (up.calls, len(up.pages)) == (1, ROWS // PAGE)
        client.send(Execute("d", 5), Sync())
        assert _ids(await client.until_ready()) == list(range(ROWS - 5, ROWS - 10, -1))
        client.send(Query("ROLLBACK"))
        await client.until_ready()
        assert up.closed == 1  # "c"'s call, at ROLLBACK; "d"'s was read to its end
    finally:
        client.writer.close()


def _steps(select: str) -> list[list[Any]]:
    """Message groups, each ending in Sync or a Query: portals suspended and continued,
    closed, ended by COMMIT, ROLLBACK, Sync outside a block and the next unnamed Bind, and
    Postgres's errors for each."""
    b = Bind("c", "s", (), (), ())
    return [
        [Query("BEGIN")],
        [Parse("s", select, ()), b, Execute("c", 10), Sync()],
        [Execute("c", 30), Sync()],
        [Execute("c", 10), Close("P", "c"), Sync()],
        [Execute("c", 10), Sync()],  # closed: 34000
        [Query("ROLLBACK")],
        [Query("BEGIN")], [b, Execute("c", 10), Sync()], [Query("COMMIT")],
        [Execute("c", 10), Sync()],  # ended with its transaction: 34000
        [b, Execute("c", 10), Execute("c", 5), Sync()],  # outside a block: until Sync
        [Execute("c", 1), Sync()],  # 34000
        [Query("BEGIN")],
        [Bind("", "s", (), (), ()), Execute("", 10), Bind("", "s", (), (), ()),
         Execute("", 3), Sync()],  # the next Bind replaces the unnamed portal
        [b, Execute("c", 10), Sync()],
        [Query("SELECT nope FROM paged")],  # 42703 fails the transaction
        [Execute("c", 10), Sync()],  # 25P02
        [Query("ROLLBACK")],
        [Query("BEGIN")], [b, b, Sync()], [Query("ROLLBACK")],  # a name in use: 42P03
        [Query("BEGIN")], [b, Execute("c", 0), Sync()],  # the whole rest, then nothing
        [Execute("c", 5), Sync()], [Query("COMMIT")],
    ]


async def _replies(client: RawClient, steps: list[list[Any]]) -> list[Any]:
    """What must match Postgres: each reply's kinds, tags, SQLSTATEs, statuses and ids."""
    out: list[Any] = []
    for messages in steps:
        client.send(*messages)
        for m in await client.until_ready():
            if isinstance(m, DataRow):
                out.append(int(m.values[0]))
            elif isinstance(m, CommandComplete):
                out.append(m.tag)
            elif isinstance(m, ErrorResponse):
                out.append((m.fields["C"], m.fields["M"]))
            elif isinstance(m, ReadyForQuery):
                out.append(m.status)
            elif type(m).__name__ not in ("NoticeResponse", "ParameterStatus"):
                out.append(type(m).__name__)
    return out


async def test_portals_end_as_postgres_ends_them_with_its_errors(paged, sidecar):
    up = paged.upstream
    client = await _raw(paged.port)
    try:
        ours = await _replies(client, _steps("SELECT id FROM paged"))
    finally:
        client.writer.close()
    # Each portal read in parts made one call; each left before its end closed it.
    assert up.calls == 7 and up.closed == 6
    postgres = await RawClient.open(sidecar.host, sidecar.port)
    try:
        assert isinstance((await postgres.startup(user=sidecar.user, database="test_paged"))[-1],
                          ReadyForQuery)
        postgres.send(Query(f"CREATE TEMP TABLE paged AS SELECT generate_series(1, {ROWS}) AS id"))
        await postgres.until_ready()
        theirs = await _replies(postgres, _steps("SELECT id FROM paged"))
    finally:
        postgres.writer.close()
    assert ours == theirs
    assert ("34000", 'portal "c" does not exist') in ours
    assert [r[0] for r in ours if isinstance(r, tuple)] == [
        "34000", "34000", "34000", "42703", "25P02", "42P03"]


async def test_a_client_gone_ends_its_portals_calls(paged):
    client = await _raw(paged.port)
    client.send(Query("BEGIN"), Parse("", SELECT, ()), Bind("c", "", (), (), ()),
                Execute("c", 10), Sync())
    await client.until_ready()
    assert _ids(await client.until_ready()) == list(range(1, 11))
    await client.close()
    for _ in range(100):
        if paged.upstream.closed:
            break
        await asyncio.sleep(0.05)
    assert (paged.upstream.calls, paged.upstream.closed) == (1, 1)


async def test_a_later_execute_is_timed_and_cancelled_as_a_statement(paged):
    """The statement timeout and a CancelRequest stop an Execute waiting on a slow page:
    57014, as Postgres words it; the transaction is failed, and the portal's call ends."""
    up = paged.upstream
    client = await _raw(paged.port)
    try:
        for cause in ("statement timeout", "user request"):
            up.reset()
            client.send(Query("BEGIN; SET LOCAL statement_timeout = '700ms'"
                              if cause == "statement timeout" else "BEGIN"))
            await client.until_ready()
            client.send(Parse("", SELECT, ()), Bind("c", "", (), (), ()), Execute("c", 10),
                        Sync())
            assert _ids(await client.until_ready()) == list(range(1, 11))
            up.slow_page, up.slow_s = 2, 3.0
            client.send(Execute("c", 100), Sync())  # rows 11 to 110: pages 1 to 4
            await client.writer.drain()
            if cause == "user request":
                await asyncio.sleep(0.3)
                _, writer = await asyncio.open_connection("127.0.0.1", paged.port)
                writer.write(CancelRequest(*client.key).encode())
                await writer.drain()
                writer.close()
            replies = await client.until_ready()
            [error] = [m for m in replies if isinstance(m, ErrorResponse)]
            assert (error.fields["C"], error.fields["M"]) == (
                "57014", f"canceling statement due to {cause}")
            assert replies[-1].status == "E"
            for _ in range(50):  # its page comes after 3 s: then the generator is closed
                if up.closed:
                    break
                await asyncio.sleep(0.1)
            assert up.closed == 1
            client.send(Execute("c", 10), Sync())  # gone with its failed transaction's end
            assert _codes(await client.until_ready()) == ["25P02"]
            client.send(Query("ROLLBACK"))
            await client.until_ready()
    finally:
        client.writer.close()


async def test_asyncpg_cursor_fetches_call_for_their_rows_alone(paged):
    up = paged.upstream
    conn = await asyncpg.connect(paged.dsn)
    try:
        plain = [tuple(r)[:2] for r in await conn.fetch("SELECT id, label, call FROM paged")]
        assert len(plain) == ROWS and up.calls == 1
        up.reset()
        async with conn.transaction():
            cur = await conn.cursor(SELECT)
            first = await cur.fetch(10)
            assert (up.calls, up.pages) == (1, [0])  # the page of those 10 rows
            second = await cur.fetch(20)
            assert (up.calls, up.pages) == (1, [0, 1])  # 30 rows: the second page too
            third = await cur.fetch(ROWS)
            assert await cur.fetch(10) == []
        rows = first + second + third
        assert [tuple(r)[:2] for r in rows] == plain
        assert len({r["call"] for r in rows}) == 1  # one call, however the rows were fetched
        assert (up.calls, len(up.pages)) == (1, ROWS // PAGE)

        # A cursor left before its end closes its call with the transaction.
        async with conn.transaction():
            cur = await conn.cursor(SELECT)
            assert [r["id"] for r in await cur.fetch(3)] == [1, 2, 3]
        assert up.closed == 1 and up.calls == 2
    finally:
        await conn.close()


async def test_the_row_limit_holds_over_the_parts_with_the_whole_reads_notice(sidecar):
    up = Upstream()
    LIMIT = PAGE - 1  # the row past it is on the first page too
    db = await Database.create([paged_resource(up)], sidecar=sidecar,
                               database="test_paged_limit", limits=Limits(row_limit=LIMIT))
    try:
        async with serving(db) as server:
            client = await _raw(server.port)
            try:
                client.send(Query("SELECT id FROM paged"))  # whole: cut, with a NOTICE
                whole = await client.until_ready()
                assert _ids(whole) == list(range(1, LIMIT + 1))
                [notice] = [m for m in whole if isinstance(m, NoticeResponse)]
                up.reset()
                client.send(Query("BEGIN"), Parse("", "SELECT id FROM paged", ()),
                            Bind("c", "", (), (), ()), Execute("c", 10), Execute("c", 10),
                            Execute("c", 10), Execute("c", 10), Sync())
                await client.until_ready()
                replies = await client.until_ready()
                assert _ids(replies) == list(range(1, LIMIT + 1))
                assert _kinds(replies) == [ParseComplete, BindComplete, PortalSuspended,
                                           PortalSuspended, NoticeResponse, CommandComplete,
                                           CommandComplete, ReadyForQuery]
                assert [m.tag for m in replies if isinstance(m, CommandComplete)] == [
                    f"SELECT {LIMIT - 20}", "SELECT 0"]
                assert [m.fields for m in replies if isinstance(m, NoticeResponse)] == [
                    notice.fields]
                # One row past the limit is pulled, to know it cuts: no page past that.
                assert (up.calls, up.pages, up.closed) == (1, [0], 1)
            finally:
                client.writer.close()
    finally:
        await db.close()
