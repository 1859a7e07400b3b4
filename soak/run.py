"""The soak's driver: a server in a subprocess, N clients, a report.

Rules:
- Bounded: it ends at its deadline (clients finish their step, then stop), and
  every wait has a timeout. Loopback only: the server listens on 127.0.0.1.
- Errors the soak provokes are expected: 57014 (its cancels), 38000 (injected tool
  failures), and a client's own disconnects. Any other SQLSTATE is unexpected.
- The server is stopped with SIGTERM at the end, which leaves no Postgres behind.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import random
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

EXPECTED = frozenset({"57014", "38000"})
FINAL = frozenset({"fired", "failed", "not run", "in doubt"})
SETTLE = 30.0  # seconds the journal may take to end final after the clients stop
START_TIMEOUT = 120.0
READS = ("SELECT count(*) FROM soak_items", "SELECT name FROM soak_items WHERE id = %s",
         "SELECT i.name, f.name FROM soak_items i JOIN soak_flaky f ON f.id = i.id",
         "SELECT count(*) FROM soak_notes")


@dataclass
class Report:
    clients: int
    seconds: float
    statements: int = 0
    errors: collections.Counter = field(default_factory=collections.Counter)
    unexpected: collections.Counter = field(default_factory=collections.Counter)
    disconnects: int = 0
    rss: dict[str, int] = field(default_factory=dict)  # start, middle, end (bytes)
    backends: dict[str, int] = field(default_factory=dict)
    journal: dict[str, int] = field(default_factory=dict)  # rows by status
    keys_fired: int = 0
    keys_twice: int = 0
    keys_missing: int = 0  # fired by a tool but not journaled fired (or the reverse)
    samples: dict[str, str] = field(default_factory=dict)  # one message per unexpected kind

    @property
    def ok(self) -> bool:
        return (not self.unexpected and self.keys_twice == 0 and self.keys_missing == 0
                and set(self.journal) <= FINAL)

    def text(self) -> str:
        mb = {k: f"{v / 2**20:.1f} MiB" for k, v in self.rss.items()}
        growth = (self.rss["end"] / self.rss["middle"] - 1) * 100 if self.rss.get("middle") else 0
        return "\n".join([
            f"soak: {self.clients} clients for {self.seconds:.0f} s",
            f"statements run: {self.statements} ({self.statements / self.seconds:.0f}/s)",
            f"errors by SQLSTATE (expected): {dict(sorted(self.errors.items()))}",
            f"unexpected errors: {dict(sorted(self.unexpected.items())) or 'none'}",
            *(f"  {k}: {v}" for k, v in self.samples.items()),
            f"disconnects (by the soak): {self.disconnects}",
            f"server RSS: start {mb.get('start')}, middle {mb.get('middle')}, "
            f"end {mb.get('end')} (end vs middle: {growth:+.1f}%)",
            f"sidecar backends: {self.backends}",
            f"journal rows by status: {dict(sorted(self.journal.items()))}",
            f"every journal row final: {set(self.journal) <= FINAL}",
            f"idempotency keys fired: {self.keys_fired}, fired twice: {self.keys_twice}, "
            f"fired but not journaled fired (or the reverse): {self.keys_missing}",
            f"result: {'OK' if self.ok else 'FAILED'}",
        ])


def _backends(data_dir: Path) -> int:
    count = 0
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            if proc.info["name"] == "postgres" and Path(proc.cwd()) == data_dir:
                cmd = " ".join(proc.info["cmdline"] or ())
                count += cmd.startswith("postgres: postgres ") or " [local]" in cmd
        except psutil.Error:
            continue
    return count


class _Client:
    def __init__(self, dsn: str, report: Report, rng: random.Random) -> None:
        self.dsn, self.report, self.rng = dsn, report, rng
        self.conn: psycopg.AsyncConnection | None = None
        self.doing = ""  # the last statement sent (for the report's samples)

    async def connect(self) -> psycopg.AsyncConnection:
        if self.conn is None or self.conn.closed:
            self.conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True,
                                                              connect_timeout=30)
        return self.conn

    async def run(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                conn = await self.connect()
                await asyncio.wait_for(self.step(conn), 60)
            except psycopg.Error as exc:
                code = exc.sqlstate
                if code in EXPECTED:
                    self.report.errors[code] += 1
                else:
                    what = code or type(exc).__name__
                    self.report.unexpected[what] += 1
                    self.report.samples.setdefault(what, f"{self.doing}: {exc}"[:300])
                conn = self.conn
                if conn is not None and not conn.closed and conn.info.transaction_status != 0:
                    try:
                        await conn.execute("ROLLBACK")  # not idle: end it
                    except psycopg.Error:
                        await self.drop()
            except TimeoutError:
                self.report.unexpected["timeout"] += 1
                await self.drop()
        await self.drop()

    async def drop(self) -> None:
        if self.conn is not None:
            await self.conn.close()
            self.conn = None

    async def q(self, conn: psycopg.AsyncConnection, sql: str, args=None) -> None:
        self.report.statements += 1
        self.doing = sql
        cur = await conn.execute(sql, args)
        if cur.description is not None:
            await cur.fetchall()

    async def step(self, conn: psycopg.AsyncConnection) -> None:
        r = self.rng.random()
        if r < 0.40:
            sql = self.rng.choice(READS)
            await self.q(conn, sql, [self.rng.randint(1, 50)] if "%s" in sql else None)
        elif r < 0.80:
            await self.transaction(conn)
        elif r < 0.88:
            title = "fail-auto" if self.rng.random() < 0.03 else "auto"
            await self.q(conn, "INSERT INTO soak_notes (title) VALUES (%s)", [title])
        elif r < 0.94:
            await self.cancel(conn)
        else:
            await self.disconnect(conn)

    async def transaction(self, conn: psycopg.AsyncConnection) -> None:
        await self.q(conn, "BEGIN")
        for _ in range(self.rng.randint(1, 3)):
            title = "fail" if self.rng.random() < 0.03 else f"t{self.rng.randint(1, 9999)}"
            await self.q(conn, "INSERT INTO soak_notes (title) VALUES (%s)", [title])
        if self.rng.random() < 0.3:
            await self.q(conn, "UPDATE soak_notes SET body = 'edited' WHERE id = %s",
                         [self.rng.randint(1, 1000)])
        await self.q(conn, "SELECT count(*) FROM soak_notes")  # reads its own writes
        await self.q(conn, "COMMIT" if self.rng.random() < 0.7 else "ROLLBACK")

    async def cancel(self, conn: psycopg.AsyncConnection) -> None:
        running = asyncio.ensure_future(self.q(conn, "SELECT * FROM soak_slow"))
        await asyncio.sleep(self.rng.uniform(0.01, 0.2))
        await conn.cancel_safe(timeout=10)
        await running  # 57014, or its rows if the cancel came too late

    async def disconnect(self, conn: psycopg.AsyncConnection) -> None:
        """Gone mid-COMMIT (or mid-read): the socket closes under the statement."""
        self.report.disconnects += 1
        if self.rng.random() < 0.5:
            await self.q(conn, "BEGIN")
            await self.q(conn, "INSERT INTO soak_notes (title) VALUES ('gone')")
            sql = "COMMIT"
        else:
            sql = "SELECT * FROM soak_slow"
        self.report.statements += 1
        pending = asyncio.ensure_future(conn.execute(sql))
        await asyncio.sleep(self.rng.uniform(0.0, 0.02))
        sever(conn)
        with contextlib.suppress(psycopg.Error, OSError):
            await pending  # fails: we closed it
        await self.drop()


def sever(conn: psycopg.AsyncConnection) -> None:
    """Close a connection's socket under it, as a client that vanishes does (libpq's own
    structures stay valid: no ``finish()`` while a query is pending)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        sock.shutdown(socket.SHUT_RDWR)


async def _start_server(data_dir: Path, keys: Path) -> tuple[asyncio.subprocess.Process, int]:
    env = {**os.environ, "SOAK_KEYS": str(keys)}
    resources = Path(__file__).with_name("resources.py")
    out = Path(os.environ.get("SOAK_SERVER_LOG") or data_dir.with_name("server.log"))
    with open(out, "wb") as log:  # the server's banner, and its log (tracebacks of tools)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--host",
            "127.0.0.1", "--port", "0", "--writes", "--resources", str(resources),
            "--sidecar-dir", str(data_dir), stdout=log, stderr=log, env=env)
    deadline = time.monotonic() + START_TIMEOUT
    while "serving" not in (text := out.read_text(errors="replace")):
        if proc.returncode is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the server did not start: {text[-2000:]}")
        await asyncio.sleep(0.1)
    port = int(text.split("127.0.0.1:")[1].split()[0].rstrip(",."))
    return proc, port


async def soak(clients: int = 64, seconds: float = 600.0, seed: int = 1) -> Report:
    report = Report(clients, seconds)
    with tempfile.TemporaryDirectory(prefix="glove-scratchpad-soak-") as tmp:
        data_dir, keys = Path(tmp) / "pgdata", Path(tmp) / "keys.tsv"
        keys.touch()
        proc, port = await _start_server(data_dir, keys)
        server = psutil.Process(proc.pid)
        dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
        try:
            start = time.monotonic()
            deadline = start + seconds
            workers = [asyncio.ensure_future(_Client(dsn, report, random.Random(seed + i))
                                             .run(deadline)) for i in range(clients)]
            marks = {"start": min(5.0, seconds * 0.1), "middle": seconds / 2}
            for name, at in marks.items():
                await asyncio.sleep(max(0.0, start + at - time.monotonic()))
                report.rss[name] = server.memory_info().rss
                report.backends[name] = _backends(data_dir)
            await asyncio.gather(*workers)
            report.seconds = time.monotonic() - start
            report.rss["end"] = server.memory_info().rss
            report.backends["end"] = _backends(data_dir)
            await _check_journal(dsn, keys, report)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        report.backends["after SIGTERM"] = _backends(data_dir)
    return report


async def _check_journal(dsn: str, keys: Path, report: Report) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        settle = time.monotonic() + SETTLE
        while True:  # COMMITs of clients gone may still be firing
            cur = await conn.execute(
                "SELECT status, count(*) FROM scratchpad.journal GROUP BY status")
            report.journal = {s: n for s, n in await cur.fetchall()}
            if set(report.journal) <= FINAL or time.monotonic() > settle:
                break
            await asyncio.sleep(0.5)
        cur = await conn.execute(
            "SELECT idempotency_key FROM scratchpad.journal WHERE status = 'fired'")
        journaled = collections.Counter(k for (k,) in await cur.fetchall())
    fired = collections.Counter(line.split("\t")[0] for line in keys.read_text().splitlines())
    report.keys_fired = len(fired)
    report.keys_twice = sum(1 for n in fired.values() if n > 1) + sum(
        1 for n in journaled.values() if n > 1)
    report.keys_missing = len(set(fired) ^ set(journaled))
