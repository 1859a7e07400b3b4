"""pgbench while the sidecar's postmaster is killed (SIGKILL): the acceptance of the
sidecar's life (issue 13).

The server (owning its embedded sidecar) stays up and restarts it; pgbench's later
transactions succeed (a second pgbench, run after, completes every one); and every
staged write is fired at most once and never silently dropped: each COMMIT's write is
journaled ``fired`` (or ``not run``, its COMMIT refused with nothing called), the tool
saw each idempotency key once, and nothing is left unfinal.
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import signal

from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.server import Server

from ..engine.fix_reliability import Notes, restarted
from .fix_clients import pg_binary, pg_env, run

CLIENTS, SECONDS, AFTER = 4, 4, 10

SCRIPT = """\
\\set id random(1, 2)
BEGIN;
INSERT INTO notes (title) VALUES ('pgbench');
SELECT title FROM notes WHERE id = :id;
SELECT count(*) FROM scratchpad.staged;
COMMIT;
"""


async def test_pgbench_survives_the_sidecar_killed_and_no_write_is_lost_or_twice(tmp_path):
    notes = Notes()
    db = await Database.create([notes.resource()], writes=True, sidecar_dir=tmp_path / "pg")
    server = Server(ServerConfig(port=0, writes=True), db)
    await server.start()
    sidecar = db.catalog.sidecar
    dsn = f"postgresql://agent@127.0.0.1:{server.port}/scratchpad"
    script = tmp_path / "write.sql"
    script.write_text(SCRIPT)
    try:
        first = asyncio.ensure_future(run(
            pg_binary("pgbench"), "--no-vacuum", "--protocol", "extended", "--file", script,
            "--client", str(CLIENTS), "--time", str(SECONDS), dsn, env=pg_env()))
        await asyncio.sleep(SECONDS / 2)
        killed = sidecar._postmaster
        os.kill(killed, signal.SIGKILL)
        ran = await first
        assert await restarted(sidecar) == 1 and sidecar._postmaster != killed
        done = re.search(r"actually processed: (\d+)", ran.stdout)
        assert done and int(done.group(1)) > 0, ran
        # The server stayed up: a second pgbench, after, completes every transaction.
        after = await run(pg_binary("pgbench"), "--no-vacuum", "--protocol", "extended",
                          "--file", script, "--client", str(CLIENTS), "--transactions",
                          str(AFTER), dsn, env=pg_env())
        assert after.returncode == 0, after
        total = CLIENTS * AFTER
        assert f"actually processed: {total}/{total}" in after.stdout, after.stdout
        rows = await db.journal.read(None)
        statuses = collections.Counter(r["status"] for r in rows)
        fired_keys = [r["idempotency_key"] for r in rows if r["status"] == "fired"]
        tool_keys = notes.keys()
        # Every COMMIT's write fired, or (a COMMIT that waited past RECONNECT_WAIT for the
        # sidecar to come back, on a slow machine) was refused with none of it called.
        assert set(statuses) <= {"fired", "not run"}, statuses
        assert len(tool_keys) == len(set(tool_keys))  # none fired twice
        assert sorted(tool_keys) == sorted(fired_keys)  # none lost, all journaled
        assert len(fired_keys) >= int(done.group(1)) + total
    finally:
        await server.shutdown()
        await db.close()
    assert not sidecar.alive()
