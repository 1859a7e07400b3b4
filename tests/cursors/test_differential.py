"""DECLARE, FETCH, MOVE and CLOSE compared with a plain Postgres, in the differential
check's style: the same statements, on the server over a paged resource and on the
sidecar's own table holding the same rows, give the same command tags, rows and errors
(SQLSTATE and message)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from .fix_cursors import item, served

ROWS = 30
_names = itertools.count()

SCRIPTS = [
    # Every direction of a SCROLL cursor, over a lazy read (one resource, row by row).
    ["BEGIN", "DECLARE c SCROLL CURSOR FOR SELECT id, label FROM items WHERE score > 2",
     "FETCH c", "FETCH NEXT FROM c", "FETCH 3 c", "FETCH FORWARD 2 FROM c", "FETCH PRIOR c",
     "FETCH BACKWARD 2 c", "FETCH FIRST c", "FETCH LAST c", "FETCH ABSOLUTE 5 c",
     "FETCH ABSOLUTE -3 c", "FETCH ABSOLUTE 0 c", "FETCH RELATIVE 4 c",
     "FETCH RELATIVE -2 c", "FETCH RELATIVE 0 c", "FETCH FORWARD 0 c", "FETCH BACKWARD 0 c",
     "MOVE FORWARD 3 c", "MOVE BACKWARD ALL c", "FETCH ALL c", "FETCH BACKWARD ALL c",
     "MOVE ABSOLUTE 100 c", "FETCH PRIOR c", "MOVE RELATIVE 0 c", "MOVE ALL c",
     "MOVE ABSOLUTE -1 c", "FETCH c", "FETCH FORWARD ALL c", "MOVE LAST IN c",
     "MOVE FIRST IN c", "MOVE PRIOR IN c", "MOVE NEXT IN c", "FETCH RELATIVE 40 c",
     "FETCH RELATIVE -40 c", "CLOSE c", "COMMIT"],
    # NO SCROLL: forward only, ABSOLUTE ahead allowed, any backward step refused.
    ["BEGIN", "DECLARE n NO SCROLL CURSOR FOR SELECT id FROM items", "FETCH ABSOLUTE 3 n",
     "FETCH ABSOLUTE 5 n", "MOVE FORWARD 0 n", "FETCH 2 n", "FETCH ABSOLUTE 1 n",
     "FETCH n", "ROLLBACK"],
    ["BEGIN", "DECLARE n NO SCROLL CURSOR FOR SELECT id FROM items", "FETCH 2 n",
     "FETCH PRIOR n", "ROLLBACK"],
    ["BEGIN", "DECLARE n NO SCROLL CURSOR FOR SELECT id FROM items", "FETCH 2 n",
     "FETCH RELATIVE 0 n", "ROLLBACK"],
    ["BEGIN", "DECLARE n NO SCROLL CURSOR FOR SELECT id FROM items", "MOVE BACKWARD ALL n",
     "FETCH n", "FETCH ABSOLUTE 0 n", "ROLLBACK"],
    # Neither said: a plain scan goes both ways.
    ["BEGIN", "DECLARE d CURSOR FOR SELECT id FROM items WHERE id < 5", "FETCH 3 d",
     "FETCH PRIOR d", "FETCH ALL d", "FETCH BACKWARD 10 d", "ROLLBACK"],
    # Queries run whole: an aggregate, ORDER BY with LIMIT, a join of the table to itself.
    ["BEGIN", "DECLARE a SCROLL CURSOR FOR SELECT count(*), max(label) FROM items",
     "FETCH a", "FETCH a", "FETCH PRIOR a",
     "DECLARE s CURSOR FOR SELECT id, label FROM items ORDER BY score DESC, id LIMIT 5",
     "FETCH ALL s", "FETCH BACKWARD 2 s",
     "DECLARE j CURSOR FOR SELECT x.id, y.label FROM items x JOIN items y ON y.id = x.id + 1"
     " WHERE x.id < 4", "FETCH 2 j", "FETCH ALL j", "COMMIT"],
    # WITH HOLD outlives COMMIT; WITHOUT HOLD ends with it; ROLLBACK ends a held one too.
    ["BEGIN", "DECLARE h CURSOR WITH HOLD FOR SELECT id, label FROM items WHERE id < 8",
     "FETCH 2 h", "COMMIT", "FETCH 3 h", "FETCH PRIOR h", "CLOSE h", "FETCH h"],
    ["BEGIN", "DECLARE w CURSOR WITHOUT HOLD FOR SELECT id FROM items", "FETCH 1 w",
     "COMMIT", "FETCH w"],
    ["BEGIN", "DECLARE r CURSOR WITH HOLD FOR SELECT id FROM items", "ROLLBACK", "FETCH r"],
    ["DECLARE o CURSOR WITH HOLD FOR SELECT id FROM items WHERE id > 25", "FETCH ALL o",
     "FETCH ALL o", "CLOSE o"],
    # Errors: outside a block without HOLD, a name in use, unknown names, CLOSE ALL.
    ["DECLARE x CURSOR FOR SELECT id FROM items"],
    ["BEGIN", "DECLARE d CURSOR FOR SELECT id FROM items",
     "DECLARE d CURSOR FOR SELECT id FROM items", "FETCH d", "ROLLBACK"],
    ["FETCH nope"], ["MOVE nope"], ["CLOSE ALL", "CLOSE nope"],
    ["BEGIN", "DECLARE b1 CURSOR FOR SELECT id FROM items",
     "DECLARE b2 BINARY CURSOR FOR SELECT id, label FROM items", "FETCH 2 b2", "FETCH b1",
     "CLOSE ALL", "FETCH b1", "ROLLBACK"],
    # Savepoints: ROLLBACK TO drops the cursors declared after it (a held one too); one
    # declared before keeps the position its FETCHes inside reached; RELEASE keeps them,
    # and gives them to the enclosing savepoint.
    ["BEGIN", "DECLARE a SCROLL CURSOR FOR SELECT id FROM items", "FETCH 2 a",
     "SAVEPOINT s", "DECLARE b CURSOR FOR SELECT id FROM items WHERE id > 20",
     "DECLARE h CURSOR WITH HOLD FOR SELECT id FROM items", "FETCH 3 a", "FETCH b",
     "ROLLBACK TO SAVEPOINT s", "FETCH b", "ROLLBACK TO s", "FETCH h", "ROLLBACK TO s",
     "FETCH a", "FETCH PRIOR a", "SELECT name FROM pg_cursors", "DECLARE b CURSOR FOR "
     "SELECT id FROM items WHERE id < 3", "FETCH ALL b", "COMMIT", "FETCH a"],
    ["BEGIN", "SAVEPOINT s", "DECLARE r CURSOR FOR SELECT id FROM items", "FETCH r",
     "SAVEPOINT t", "DECLARE q CURSOR FOR SELECT id FROM items", "RELEASE SAVEPOINT t",
     "FETCH r", "FETCH q", "SELECT name FROM pg_cursors ORDER BY name", "ROLLBACK TO s",
     "SELECT count(*) FROM pg_cursors", "FETCH q", "ROLLBACK"],
    ["BEGIN", "SAVEPOINT s", "DECLARE f CURSOR FOR SELECT id FROM items", "SELECT 1/0",
     "FETCH f", "ROLLBACK TO s", "FETCH f", "ROLLBACK"],
    # A held cursor declared inside a savepoint outlives COMMIT, and no later savepoint's
    # ROLLBACK TO drops it.
    ["BEGIN", "SAVEPOINT s", "SAVEPOINT t",
     "DECLARE h CURSOR WITH HOLD FOR SELECT id FROM items WHERE id < 5", "COMMIT",
     "BEGIN", "SAVEPOINT u", "FETCH h", "ROLLBACK TO u", "FETCH h", "ROLLBACK", "FETCH h",
     "CLOSE h"],
    # pg_cursors: the session's own cursors.
    ["BEGIN", "DECLARE p1 SCROLL CURSOR FOR SELECT id FROM items",
     "DECLARE p2 NO SCROLL CURSOR WITH HOLD FOR SELECT id FROM items",
     "SELECT name, statement, is_holdable, is_binary, is_scrollable FROM pg_cursors "
     "ORDER BY name", "COMMIT",
     "SELECT name, is_holdable FROM pg_catalog.pg_cursors", "CLOSE p2",
     "SELECT count(*) FROM pg_cursors"],
]


def _sidecar_dsn(sidecar: Any, database: str) -> str:
    return (f"host={sidecar.host} port={sidecar.port} user={sidecar.user} dbname={database}"
            + (f" password={sidecar.password}" if sidecar.password else ""))


@pytest.fixture
async def reference(sidecar: Any) -> AsyncIterator[str]:
    """A database of the sidecar holding the items as a plain table."""
    name = f"cursors_ref_{next(_names)}"
    async with await psycopg.AsyncConnection.connect(
            _sidecar_dsn(sidecar, "postgres"), autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
    url = _sidecar_dsn(sidecar, name)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("CREATE TABLE items (id bigint, label text, score float8)")
        async with conn.cursor() as cur:
            await cur.executemany("INSERT INTO items VALUES (%(id)s, %(label)s, %(score)s)",
                                  [item(i) for i in range(ROWS)])
    yield url
    async with await psycopg.AsyncConnection.connect(
            _sidecar_dsn(sidecar, "postgres"), autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


async def _outcomes(url: str, script: list[str]) -> list[Any]:
    out: list[Any] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True,
                                                     prepare_threshold=None) as conn:
        for sql in script:
            try:
                cur = await conn.execute(sql)
            except psycopg.Error as exc:
                out.append((sql, exc.sqlstate, exc.diag.message_primary))
                continue
            rows = await cur.fetchall() if cur.description else None
            out.append((sql, cur.statusmessage, rows))
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=[" ; ".join(s[:3]) for s in SCRIPTS])
async def test_cursor_statements_as_postgres(make_db: Any, reference: str,
                                             script: list[str]) -> None:
    async with served(make_db, ROWS) as (url, _):
        got = await _outcomes(url, script)
    want = await _outcomes(reference, script)
    assert got == want
