"""COPY … FROM STDIN into a resource is one INSERT with every row: psql's ``\\copy``,
psycopg's ``cursor.copy`` and ADBC's ``adbc_ingest(mode="append")``. Inside BEGIN it is
staged (NOTICE, ``scratchpad.staged``) and COMMIT makes one call; a bad line sends
nothing and names the line; without ``--writes`` it is refused with 25006."""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Resource, define_resource
from glove_scratchpad.server import Database

from ..fix_server import dsn as dsn_of
from ..fix_server import serving

pytestmark = pytest.mark.asyncio


class Note(BaseModel):
    id: int | None = None
    title: str
    due: dt.date | None = None
    points: int = 0


READS: list[int] = []  # one entry per call of notes' select


def _notes() -> tuple[Resource, list[list[Note]]]:
    store: dict[int, Note] = {}
    calls: list[list[Note]] = []

    def insert(rows: list[Note]) -> list[Note]:
        calls.append(list(rows))
        made = []
        for row in rows:
            note = row.model_copy(update={"id": len(store) + 1})
            store[note.id] = note  # type: ignore[index]
            made.append(note)
        return made

    return define_resource("notes", schema=Note, primary_key=["id"], volatility="volatile",
                           select=lambda b: READS.append(1) or list(store.values()),
                           insert=insert,
                           stateful=True), calls


@pytest.fixture
async def served(sidecar: Any, request: pytest.FixtureRequest
                 ) -> AsyncIterator[tuple[str, list[list[Note]]]]:
    writes = getattr(request, "param", True)
    notes, calls = _notes()
    db = await Database.create([notes], writes=writes, sidecar=sidecar,
                               database=f"copy_writes_{request.node.name[:20].lower()}"
                               .replace("[", "_").replace("]", "_").replace("-", "_"))
    async with serving(db, writes=writes) as server:
        yield dsn_of(server), calls
    await db.close()


async def _titles(dsn: str) -> list[tuple[Any, ...]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT title, due, points FROM notes ORDER BY id")
        return await cur.fetchall()


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")
async def test_psql_backslash_copy_from_a_csv_file(served: Any, tmp_path: Path) -> None:
    dsn, calls = served
    data = tmp_path / "notes.csv"
    data.write_text('title,due,points\n"a, quoted",2026-01-02,3\nplain,,4\n')
    done = await asyncio.to_thread(
        subprocess.run, ["psql", dsn, "-c",
                         f"\\copy notes (title, due, points) FROM '{data}' CSV HEADER"],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "COPY 2"
    assert len(calls) == 1 and len(calls[0]) == 2  # one call with every row
    assert await _titles(dsn) == [("a, quoted", dt.date(2026, 1, 2), 3), ("plain", None, 4)]


@pytest.mark.parametrize("binary", [False, True])
async def test_psycopg_copy_inside_begin_is_staged_and_commit_calls_once(
        served: Any, binary: bool) -> None:
    dsn, calls = served
    notices: list[str] = []
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        cur = conn.cursor()
        fmt = " (FORMAT binary)" if binary else ""
        async with cur.copy(f"COPY notes (title, points) FROM STDIN{fmt}") as copy:
            if binary:
                copy.set_types(["text", "bigint"])
            for i in range(5):
                await copy.write_row((f"note {i}", i))
        assert cur.statusmessage == "COPY 5"
        assert calls == []  # staged, not sent
        assert any("staged" in n for n in notices), notices
        staged = await (await conn.execute("SELECT * FROM scratchpad.staged")).fetchall()
        assert len(staged) == 1, staged
        await conn.commit()
    assert len(calls) == 1 and [n.title for n in calls[0]] == [f"note {i}" for i in range(5)]


async def test_copy_outside_a_transaction_fires_at_once(served: Any) -> None:
    dsn, calls = served
    async with (await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn,
                conn.cursor().copy("COPY notes (title) FROM STDIN") as copy):
        await copy.write(b"one\ntwo\\tx\n")
    assert len(calls) == 1
    assert [n.title for n in calls[0]] == ["one", "two\tx"]


@pytest.mark.parametrize("line", [b"good\t1\nbad\tnot a number\n", b"good\t1\nshort\n"])
async def test_a_bad_line_sends_nothing_and_names_the_line(served: Any, line: bytes) -> None:
    dsn, calls = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DataError) as info:
            async with conn.cursor().copy("COPY notes (title, points) FROM STDIN") as copy:
                await copy.write(line)
    assert info.value.sqlstate in ("22P02", "22P04")
    assert "line 2" in (info.value.diag.context or "")
    assert calls == []
    assert await _titles(dsn) == []


@pytest.mark.parametrize("served", [False], indirect=True)
async def test_without_writes_copy_from_is_refused(served: Any) -> None:
    dsn, calls = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            async with conn.cursor().copy("COPY notes (title) FROM STDIN") as copy:
                await copy.write(b"one\n")
    assert calls == []


async def test_adbc_ingest_append(served: Any) -> None:
    dbapi = pytest.importorskip("adbc_driver_postgresql.dbapi")
    pa = pytest.importorskip("pyarrow")
    dsn, calls = served
    table = pa.table({"title": ["x", "y", "z"], "points": pa.array([1, 2, 3], pa.int64())})

    def ingest() -> int:
        with dbapi.connect(dsn) as conn, conn.cursor() as cur:
            count = cur.adbc_ingest("notes", table, mode="append")
            conn.commit()
            return int(count)

    assert await asyncio.to_thread(ingest) == 3
    assert len(calls) == 1 and [n.points for n in calls[0]] == [1, 2, 3]


async def test_copyfail_sends_nothing_and_the_connection_goes_on(served: Any) -> None:
    dsn, calls = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.QueryCanceled):
            async with conn.cursor().copy("COPY notes (title) FROM STDIN") as copy:
                await copy.write(b"one\n")
                raise psycopg.errors.QueryCanceled("the client gave up")  # sends CopyFail
        assert await (await conn.execute("SELECT count(*) FROM notes")).fetchone() == (0,)
    assert calls == []


async def test_copy_to_makes_each_call_once(served: Any) -> None:
    dsn, _ = served
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        async with conn.cursor().copy("COPY notes (title) FROM STDIN") as copy:
            await copy.write(b"a\nb\n")
        READS.clear()
        out = b""
        async with conn.cursor().copy(
                "COPY (SELECT a.title, b.title FROM notes a JOIN notes b ON a.id = b.id "
                "ORDER BY a.id) TO STDOUT") as copy:
            async for data in copy:
                out += bytes(data)
        assert out == b"a\ta\nb\tb\n"
        assert READS == [1]  # the two references share one call, as the SELECT's do
