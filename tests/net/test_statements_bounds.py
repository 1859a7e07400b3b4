"""A statement's size, depth and number of nodes are bounded, so that no client's
statement crashes the server or holds the event loop while another waits.

The attacks as they were seen: ``SELECT 1+1+…`` of 50,000 terms crashed the process
(pglast builds its tree recursively in C); an IN list of 200,000 values (1.3 MB) held
the event loop for seconds. Sizes are walked up to the limits: each statement gets an
answer or a clear error (54000, 54001, with a HINT), and the server serves on.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
import pytest

from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.sql.parse import MAX_DEPTH

from ..fix_cli import cli_server
from ..fix_server import free_port, sidecar_database

MAX_BYTES = ServerConfig.model_fields["max_statement_bytes"].default
MAX_NODES = ServerConfig.model_fields["max_statement_nodes"].default
LATENCY_BOUND_S = 0.25  # the bound another client's SELECT 1 keeps (the whole margin)


def _chain(terms: int) -> str:
    return "SELECT 1" + "+1" * (terms - 1)


def _in_list(values: int) -> str:
    return "SELECT 1 WHERE 1 IN (" + ", ".join(map(str, range(values))) + ")"


async def _outcome(conn: psycopg.AsyncConnection[Any], sql: str) -> str:
    """"ok", or the SQLSTATE of the error (with "no hint" if it has none), or "gone"
    when the connection is."""
    try:
        cur = await conn.execute(sql)
        if cur.description is not None:
            await cur.fetchall()
    except psycopg.Error as exc:
        if exc.sqlstate is None:  # no answer: the connection (or the server) is gone
            return "gone"
        return f"{exc.sqlstate}{'' if exc.diag.message_hint else ' no hint'}"
    return "ok"


async def _serves(dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as other:
        assert await (await other.execute("SELECT 1")).fetchall() == [(1,)]


async def test_a_chain_of_50000_terms_is_refused_and_the_process_serves_on(sidecar):
    """Walked up to the byte limit: answered while shallow, 54001 once deeper than
    MAX_DEPTH; the server's own process survives every one."""
    port, database = free_port(), "test_statement_bounds"
    own = await sidecar_database(sidecar, database)
    async with cli_server("--port", str(port), "--sidecar-dsn", own) as running:
        dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            longest = (MAX_BYTES - len("SELECT 1")) // 2
            walk = (MAX_DEPTH - 10, MAX_DEPTH + 10, 600, 1000, 5000, 25_000, 50_000, longest)
            outcomes = [await _outcome(conn, _chain(terms)) for terms in walk]
            assert outcomes == [("ok" if terms < MAX_DEPTH else "54001") for terms in walk]
            # A prefix operator nests a level a byte or two; the lexer reads a run of
            # them in quadratic time, and the grammar's own stack stops them (42601).
            for levels in (1000, 20_000, MAX_BYTES // 2 - 20):
                for sql in ("SELECT " + "-+" * levels + "1", "SELECT " + "~ " * levels + "1"):
                    assert await _outcome(conn, sql) in ("54001", "42601"), levels
            assert await _outcome(conn, "SELECT 2") == "ok"
        await _serves(dsn)
        assert running.proc.returncode is None


async def test_a_long_in_list_is_answered_or_refused_and_others_are_served(dsn):
    """The 1.3 MB list is refused before it is parsed (54000); lists are walked from
    small to the byte limit: answered up to max_statement_nodes, then 54001."""
    per_value = 2  # a constant is two nodes (A_Const, Integer)
    fits = (MAX_NODES - 8) // per_value  # 8: the rest of the statement
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        assert await _outcome(conn, _in_list(200_000)) == "54000"
        for values in (10, 1000, fits, fits + 10, 20_000):
            assert await _outcome(conn, _in_list(values)) == ("ok" if values <= fits
                                                               else "54001"), values
        longest = 1
        while len(_in_list(longest * 2)) <= MAX_BYTES:
            longest *= 2
        assert await _outcome(conn, _in_list(longest)) == "54001"  # parsed, then refused
        assert len(_in_list(longest * 2)) > MAX_BYTES
        assert await _outcome(conn, _in_list(longest * 2)) == "54000"
        assert await _outcome(conn, "SELECT 1") == "ok"
    await _serves(dsn)


async def test_a_long_text_of_few_nodes_is_answered(dsn):
    """Bytes are not nodes: a long literal within max_statement_bytes is served."""
    literal = "x" * (MAX_BYTES - 64)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(f"SELECT length('{literal}')")
        assert await cur.fetchall() == [(len(literal),)]
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as info:
            await conn.execute(f"SELECT length('{literal * 2}')")
        assert "max_statement_bytes" in str(info.value)
        # Parse too: the limits hold for the extended protocol's statements.
        with pytest.raises(psycopg.errors.StatementTooComplex):
            await conn.execute(_chain(MAX_DEPTH + 10), prepare=True)


async def _probe(dsn: str, stop: asyncio.Event, latencies: list[float]) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            start = time.perf_counter()
            await (await conn.execute("SELECT 1")).fetchall()
            latencies.append(time.perf_counter() - start)
            await asyncio.sleep(0.002)


async def test_select_1_of_another_client_waits_at_most_250_ms(dsn):
    """While one client sends the largest statements the server accepts (and the
    largest it parses before refusing), another's SELECT 1 never waits above 250 ms."""
    fits = (MAX_NODES - 8) // 2
    rows = (MAX_NODES - 12) // 2  # a row's value is two nodes
    largest = [
        _in_list(fits),  # the most nodes a read may have
        "BEGIN",  # the write is staged, and rolled back: the shared server's tasks stay
        "INSERT INTO tasks (title) VALUES " + ", ".join(["('t')"] * rows),
        "ROLLBACK",
        "SELECT length('" + "x" * (MAX_BYTES - 64) + "')",  # the most bytes
        _in_list((MAX_BYTES - 64) // 7),  # the most bytes of nodes: parsed, refused
    ]
    stop, latencies = asyncio.Event(), []
    probe = asyncio.create_task(_probe(dsn, stop, latencies))
    try:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            while not latencies:
                await asyncio.sleep(0.01)
            outcomes = [await _outcome(conn, sql) for sql in largest]
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await probe
    assert len(latencies) > 5
    assert max(latencies) <= LATENCY_BOUND_S, sorted(latencies)[-5:]
    assert outcomes == ["ok", "ok", "ok", "ok", "ok", "54001"]
