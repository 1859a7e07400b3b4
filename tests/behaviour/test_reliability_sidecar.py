"""The sidecar's life, over the wire: a server that survives its sidecar.

- An embedded sidecar whose postmaster is killed (SIGKILL) is restarted by the
  server: the statement in flight gets 57P01 or 08006 with a HINT to retry, the
  next ones work within seconds, and a transaction's staged writes (kept in the
  server) are not lost: its COMMIT fires them once.
- With ``--sidecar-dsn`` (a Postgres the server does not own), a lost sidecar is
  waited for with backoff: the server stays up, and a statement sent while it is
  down runs once it is back.
- A client that goes away mid-COMMIT stops none of its writes: they finish, the
  journal ends with each one ``fired``, and none fires twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from contextlib import asynccontextmanager

import psycopg
import pytest

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.server import Database
from soak.run import sever

from ..engine.fix_reliability import Notes, restarted, serve, serve_db

# Seconds of sidecar work that write nothing: a set-returning function in the target list
# streams its rows, where one in FROM would spill gigabytes to a temporary file (which
# the restart after a crash must then flush and delete).
HEAVY = "SELECT count(*) FROM (SELECT generate_series(1, 300000000)) AS s"
JOURNAL = "SELECT seq, status, idempotency_key FROM scratchpad.journal ORDER BY txid, seq"


@asynccontextmanager
async def own_sidecar(tmp_path, resources):
    """A server that owns its embedded sidecar (in ``tmp_path``), as ``serve`` does."""
    db = await Database.create(resources, writes=True, sidecar_dir=tmp_path / "pgdata")
    async with serve_db(db) as s:
        yield s


async def until_works(conn, sql, within=10.0):
    deadline = time.monotonic() + within
    while True:
        try:
            return await (await conn.execute(sql)).fetchall()
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def test_a_killed_sidecar_is_restarted_and_staged_writes_survive(tmp_path):
    notes = Notes()
    async with own_sidecar(tmp_path, [notes.resource()]) as served:
        sidecar = served.db.catalog.sidecar
        assert isinstance(sidecar, EmbeddedSidecar)
        writer, reader = await served.connect(), await served.connect()
        await writer.execute("BEGIN")
        await writer.execute("INSERT INTO notes (title) VALUES ('kept')")
        heavy = asyncio.ensure_future(reader.execute(HEAVY))
        await asyncio.sleep(0.5)  # the sidecar is running it
        old = sidecar._postmaster
        os.kill(old, signal.SIGKILL)
        with pytest.raises(psycopg.OperationalError) as caught:
            await heavy
        assert caught.value.sqlstate in ("57P01", "08006")
        assert "again" in (caught.value.diag.message_hint or "")
        started = time.monotonic()
        assert await until_works(reader, "SELECT 1") == [(1,)]
        assert time.monotonic() - started < 5
        assert await restarted(sidecar) == 1 and sidecar._postmaster != old
        cur = await writer.execute("SELECT count(*) FROM scratchpad.staged")
        assert await cur.fetchone() == (1,)  # kept in the server
        await writer.execute("COMMIT")
        assert notes.writes() == [("insert", ["kept"])]
        rows = await (await reader.execute(JOURNAL)).fetchall()
        assert [(s, st) for s, st, _ in rows] == [(1, "fired")]
        await writer.close()
        await reader.close()
    assert not sidecar.alive()


async def test_an_external_sidecar_that_goes_away_is_waited_for(tmp_path, sidecar):
    external = EmbeddedSidecar(tmp_path / "ext")
    await external.start()
    try:
        db = await Database.create([Notes().resource()], writes=True,
                                   sidecar_dsn=external.dsn, database="ext_db")
        async with serve_db(db) as served:
            conn = await served.connect()
            assert await (await conn.execute("SELECT count(*) FROM notes")).fetchall() == [(2,)]
            os.kill(external._postmaster, signal.SIGKILL)
            await asyncio.sleep(0.3)
            # Sent while the sidecar is down; it comes back a second later.
            timer = threading.Timer(1.0, external.restart_blocking)
            timer.start()
            cur = await conn.execute("SELECT count(*) FROM notes")
            assert await cur.fetchall() == [(2,)]
            timer.join()
            await conn.close()
    finally:
        await external.stop()


async def test_a_client_gone_mid_commit_stops_none_of_its_writes(sidecar):
    notes = Notes(gate=threading.Event())
    async with serve(sidecar, [notes.resource()]) as served:
        goer, watcher = await served.connect(), await served.connect()
        await goer.execute("BEGIN")
        for title in ("a", "b", "c"):
            await goer.execute("INSERT INTO notes (title) VALUES (%s)", [title])
        committing = asyncio.ensure_future(goer.execute("COMMIT"))
        assert await asyncio.to_thread(notes.entered.wait, 10)
        sever(goer)  # the socket closes under the COMMIT
        with pytest.raises(psycopg.Error):
            await committing
        await asyncio.sleep(0.2)  # the server has noticed
        notes.gate.set()
        deadline = time.monotonic() + 10
        while True:
            rows = await (await watcher.execute(JOURNAL)).fetchall()
            if [st for _, st, _ in rows] == ["fired"] * 3 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert [st for _, st, _ in rows] == ["fired"] * 3
        assert notes.writes() == [("insert", ["a"]), ("insert", ["b"]), ("insert", ["c"])]
        keys = notes.keys()
        assert len(set(keys)) == 3 and keys == [k for _, _, k in rows]
        await watcher.close()


def _postgres_in(data_dir) -> set[int]:
    import psutil

    found = set()
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "postgres" and os.path.samefile(proc.cwd(), data_dir):
                found.add(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


async def _start_server(data_dir):
    import sys

    log = data_dir.with_name(f"server-{time.monotonic_ns()}.log")
    with open(log, "wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
            "--host", "127.0.0.1", "--sidecar-dir", str(data_dir),
            stdout=asyncio.subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    assert b"serving" in line, (line, log.read_text()[-3000:])
    return proc


def _live(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


async def test_a_sidecar_left_by_a_killed_server_is_stopped_by_the_next(tmp_path):
    data_dir = tmp_path / "pgdata"
    first = await _start_server(data_dir)
    try:
        left = int((data_dir / "postmaster.pid").read_text().split()[0])
    finally:
        first.kill()  # kill -9: the sidecar outlives it
        await first.wait()
    assert _live(left) and left in _postgres_in(data_dir)
    second = await _start_server(data_dir)
    try:
        now = int((data_dir / "postmaster.pid").read_text().split()[0])
        assert now != left and not _live(left)  # the leftover was stopped, a new one runs
    finally:
        second.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(second.wait(), 30) == 0
    assert _postgres_in(data_dir) == set()  # SIGTERM leaves no Postgres behind
