"""Servers of one name on one database, one of them killed while it fires a write: the
others, running on, journal that write ``in doubt`` within seconds, without a restart,
once, with an audit row (the writes its COMMIT had not reached: ``not run``); their own
writes in flight stay ``firing``. ``restage`` then takes it with ``force => true``, as
after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ..fix_cli import Running, cli_server
from ..fix_server import free_port

FIXTURE = str(Path(__file__).with_name("fix_slow_writes.py"))
SETTLED_WITHIN = 20.0  # seconds; the servers look every 2 s, and at each read of the journal
OWN_SECONDS = 8.0  # the running server's own write: firing across the kill and the look
NAME = f"firing{secrets.token_hex(3)}"
SYSTEM = f"{NAME}_scratchpad"  # the system schema of a server of that name
JOURNAL = f"SELECT txid, seq, status, statement, error FROM {SYSTEM}.journal ORDER BY txid"


@contextlib.asynccontextmanager
async def _server(sidecar: Any, name: str):  # type: ignore[no-untyped-def]
    port = free_port()
    dsn = sidecar.dsn.replace("/scratchpad?", "/postgres?")  # a database both share
    async with cli_server("--resources", FIXTURE, "--sidecar-dsn", dsn, "--name", name,
                          "--port", str(port), "--writes") as running:
        yield running, f"postgresql://agent@127.0.0.1:{port}/scratchpad"


async def _journal(conn: psycopg.AsyncConnection[Any]) -> dict[str, tuple[Any, ...]]:
    """Each write's row by its title: ``a`` and ``after a`` (one COMMIT of the server that
    is killed), ``b`` (the other's)."""
    cur = await conn.execute(JOURNAL)
    rows = await cur.fetchall()
    return {r[3].split("'")[1].removeprefix("from "): (r[0], r[1], r[2], r[4]) for r in rows}


async def _until(conn: psycopg.AsyncConnection[Any], done: Any, seconds: float = 20
                  ) -> dict[str, tuple[Any, ...]]:
    deadline = time.monotonic() + seconds
    while True:
        rows = await _journal(conn)
        if done(rows) or time.monotonic() > deadline:
            return rows
        await asyncio.sleep(0.2)


def _kill(running: Running) -> None:
    running.proc.kill()  # SIGKILL: no shutdown, its sidecar connections simply end


async def test_a_killed_servers_firing_write_is_in_doubt_for_a_server_running_on(sidecar):
    async with _server(sidecar, NAME) as (b, b_dsn), _server(sidecar, NAME) as (a, a_dsn):
        a_conn = await psycopg.AsyncConnection.connect(a_dsn, autocommit=True)
        b_conn = await psycopg.AsyncConnection.connect(b_dsn, autocommit=True)
        b_writer = await psycopg.AsyncConnection.connect(b_dsn, autocommit=True)
        await a_conn.execute("BEGIN")
        await a_conn.execute("INSERT INTO orders (title, seconds) VALUES ('from a', 50)")
        await a_conn.execute("INSERT INTO orders (title) VALUES ('after a')")
        a_write = asyncio.ensure_future(a_conn.execute("COMMIT"))
        rows = await _until(b_conn, lambda r: "a" in r)
        assert (rows["a"][2], rows["after a"][2]) == ("firing", "staged"), rows
        b_write = asyncio.ensure_future(b_writer.execute(
            "INSERT INTO orders (title, seconds) VALUES ('from b', %s)", [OWN_SECONDS]))
        rows = await _until(b_conn, lambda r: "b" in r)
        assert rows["b"][2] == "firing" and rows["a"][2] == "firing", rows

        _kill(a)
        await a.proc.wait()
        killed = time.monotonic()
        # The audit of calls, read without a read of the journal: the server looks by itself.
        audit = (f"SELECT status, arguments, error FROM {SYSTEM}.calls"
                 " WHERE resource = 'orders' AND status = 'in doubt'")
        while not await (await b_conn.execute(audit)).fetchall():
            assert time.monotonic() - killed < SETTLED_WITHIN, "still firing"
            await asyncio.sleep(0.2)
        rows = await _journal(b_conn)
        txid, seq, status, error = rows["a"]
        assert status == "in doubt" and error and "stopped while it ran" in error
        assert rows["after a"][2] == "not run", rows  # the COMMIT stopped before it
        # The running server's own write, firing all along, was never taken for a lost one.
        assert rows["b"][2] in ("firing", "fired"), rows

        # restage refuses it as any write in doubt, and takes it when forced.
        with pytest.raises(psycopg.errors.InvalidTransactionState) as refused:
            await b_conn.execute(f"SELECT {SYSTEM}.restage(%s)", [txid])
        assert "stopped while it ran" in (refused.value.diag.message_detail or "")
        cur = await b_conn.execute(f"SELECT {SYSTEM}.restage(%s, force => true)", [txid])
        [(said,)] = await cur.fetchall()
        assert said.startswith(f"staged 2 writes of transaction {txid} again"), said
        await b_conn.execute("ROLLBACK")

        # Settled once, however often the server looked since, and audited once.
        [(_, arguments, audited)] = await (await b_conn.execute(audit)).fetchall()
        assert arguments == {"txid": txid, "seq": seq} and audited == error
        assert any("is in doubt: its server" in line for line in b.log), b.log[-10:]

        await b_write  # its own write was never touched: it fired
        assert (await _journal(b_conn))["b"][2] == "fired"
        with contextlib.suppress(psycopg.Error):
            await a_write
        for conn in (a_conn, b_conn, b_writer):
            with contextlib.suppress(psycopg.Error):
                await conn.close()
