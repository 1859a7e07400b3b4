"""pg8000 against the wire server: its native API and its DB-API.

pg8000 speaks only the extended protocol, with unnamed statements for ``run``
and ``execute`` and named ones for ``prepare``. It sends its parameters as text
with type OIDs of its own choosing, and raises every server error as
``DatabaseError`` whose first argument holds the ErrorResponse fields by code.
"""

from __future__ import annotations

from typing import Any

import pg8000.dbapi
import pg8000.native
import pytest

from .fix_clients import (
    ABORTED_STATE,
    ITEM_7,
    JOIN_ROWS,
    JOIN_SQL,
    MISSING_KEY_HINT,
    MISSING_KEY_MESSAGE,
    MISSING_KEY_SQL,
    MISSING_KEY_STATE,
    STAGED_HINT,
    STAGED_SQL,
    TABLES,
    TABLES_SQL,
    TASK_COLUMNS,
    TASK_COLUMNS_SQL,
    WEB_ROWS,
    WEB_SQL,
    fired_notice,
    handler_of,
    in_thread,
    staged_notice,
    staged_rows,
)


def _notices(conn: Any) -> list[tuple[str, str, str | None]]:
    """(severity, message, hint) of the notices received since the last call."""
    out = [(n[b"S"].decode(), n[b"M"].decode(), n[b"H"].decode() if b"H" in n else None)
           for n in conn.notices]
    conn.notices.clear()
    return out


def _tuples(rows: Any) -> list[tuple]:
    return [tuple(r) for r in rows or ()]


def _expect_missing_key(fn: Any, *args: Any) -> None:
    with pytest.raises(pg8000.dbapi.DatabaseError) as info:
        fn(*args)
    fields = info.value.args[0]
    assert (fields["C"], fields["M"], fields["H"]) == (MISSING_KEY_STATE, MISSING_KEY_MESSAGE,
                                                      MISSING_KEY_HINT)
    assert (fields["S"], fields["t"], fields["c"]) == ("ERROR", "web", "query")


# -- the native API ----------------------------------------------------------------


async def test_native_reads(address):
    def run() -> None:
        con = pg8000.native.Connection(**address)
        try:
            assert _tuples(con.run(TABLES_SQL)) == [(t,) for t in TABLES]
            assert _tuples(con.run(TASK_COLUMNS_SQL)) == TASK_COLUMNS
            assert _tuples(con.run(WEB_SQL)) == WEB_ROWS
            assert con.row_count == 2
            assert _tuples(con.run("SELECT id, name, price FROM items WHERE id = :id",
                                   id=7)) == [ITEM_7]
            assert [c["type_oid"] for c in con.columns] == [20, 25, 701]  # bigint, text, float8
            assert _tuples(con.run("SELECT title, rank FROM web WHERE query = :q ORDER BY rank",
                                   q="postgresql")) == WEB_ROWS
            assert _tuples(con.run(JOIN_SQL)) == JOIN_ROWS
            assert con.row_count == 3
            assert _notices(con) == []
        finally:
            con.close()

    await in_thread(run)


async def test_native_staged_write_and_commit(address):
    def run() -> None:
        con = pg8000.native.Connection(**address)
        try:
            con.run("BEGIN")
            assert _tuples(con.run(
                "INSERT INTO emails (to_addr, subject) VALUES (:to, :subject) RETURNING id",
                to="bo@example.org", subject="native")) == [(None,)]  # staged: no id yet
            assert con.row_count == 1
            assert _notices(con) == [("NOTICE", staged_notice(1), STAGED_HINT)]
            assert _tuples(con.run(STAGED_SQL)) == staged_rows(1)
            con.run("COMMIT")
            assert _notices(con) == [("NOTICE", fired_notice(1), None)]
            assert _tuples(con.run(STAGED_SQL)) == []
            [(email_id, subject)] = con.run(
                "INSERT INTO emails (to_addr, subject) VALUES (:to, :subject) "
                "RETURNING id, subject", to="bo@example.org", subject="fired at once")
            assert isinstance(email_id, int) and email_id > 0
            assert subject == "fired at once"
        finally:
            con.close()

    await in_thread(run)


async def test_native_error_then_same_connection(address):
    def run() -> None:
        con = pg8000.native.Connection(**address)
        try:
            _expect_missing_key(con.run, MISSING_KEY_SQL)
            assert _tuples(con.run("SELECT name FROM items WHERE id = :id", id=1)) == [
                ("item 1",)]
            con.run("BEGIN")
            _expect_missing_key(con.run, MISSING_KEY_SQL)
            with pytest.raises(pg8000.native.DatabaseError) as info:
                con.run("SELECT 1")
            assert info.value.args[0]["C"] == ABORTED_STATE
            con.run("ROLLBACK")
            assert _tuples(con.run(JOIN_SQL)) == JOIN_ROWS
        finally:
            con.close()

    await in_thread(run)


async def test_native_prepared_statement_is_reused(address, server):
    con = await in_thread(pg8000.native.Connection, **address)
    try:
        ps = await in_thread(con.prepare, "SELECT id, name, price FROM items WHERE id = :id")

        def run() -> list[Any]:
            out = [_tuples(ps.run(id=i)) for i in (7, 8)]
            _expect_missing_key(con.run, MISSING_KEY_SQL)
            out.append(_tuples(ps.run(id=9)))  # still prepared after an error
            return out

        assert await in_thread(run) == [[ITEM_7], [(8, "item 8", 12.0)], [(9, "item 9", 13.5)]]
        # pg8000 keeps the BackendKeyData body as it came: the pid, then the secret.
        handler = handler_of(server, int.from_bytes(con._backend_key_data[:4], "big"))
        assert [p.stmt.sql for name, p in handler.statements.items() if name] == [
            "SELECT id, name, price FROM items WHERE id = $1"]
        await in_thread(ps.close)
        assert [name for name in handler.statements if name] == []  # Close (statement)
    finally:
        await in_thread(con.close)


# -- the DB-API ----------------------------------------------------------------------


async def test_dbapi_matrix(address):
    """Reads, a parameter, a JOIN, a staged write and COMMIT, an error and ROLLBACK."""

    def run() -> None:
        conn = pg8000.dbapi.connect(**address)
        try:
            cur = conn.cursor()
            cur.execute(TABLES_SQL)
            assert _tuples(cur.fetchall()) == [(t,) for t in TABLES]
            cur.execute(WEB_SQL)
            assert (_tuples(cur.fetchall()), cur.rowcount) == (WEB_ROWS, 2)
            cur.execute("SELECT id, name, price FROM items WHERE id = %s", (7,))
            assert [d[:2] for d in cur.description] == [("id", 20), ("name", 25), ("price", 701)]
            assert _tuples(cur.fetchall()) == [ITEM_7]
            cur.execute(JOIN_SQL)
            assert _tuples(cur.fetchall()) == JOIN_ROWS
            conn.commit()  # pg8000 began a transaction: nothing was staged in it
            assert _notices(conn) == []

            cur.executemany("INSERT INTO emails (to_addr, subject) VALUES (%s, %s)",
                            [("cy@example.org", "one"), ("cy@example.org", "two")])
            assert cur.rowcount == 2
            assert _notices(conn) == [("NOTICE", staged_notice(i), STAGED_HINT) for i in (1, 2)]
            cur.execute(STAGED_SQL)
            assert _tuples(cur.fetchall()) == staged_rows(2)
            conn.commit()
            assert _notices(conn) == [("NOTICE", fired_notice(i), None) for i in (1, 2)]
            cur.execute(STAGED_SQL)
            assert _tuples(cur.fetchall()) == []

            _expect_missing_key(cur.execute, MISSING_KEY_SQL)
            with pytest.raises(pg8000.dbapi.DatabaseError) as info:
                cur.execute("SELECT 1")
            assert info.value.args[0]["C"] == ABORTED_STATE
            conn.rollback()
            cur.execute("SELECT name FROM items WHERE id = %s", (2,))
            assert _tuples(cur.fetchall()) == [("item 2",)]
            conn.rollback()
        finally:
            conn.close()

    await in_thread(run)


async def test_dbapi_autocommit_insert_fires_at_once(address):
    def run() -> None:
        conn = pg8000.dbapi.connect(**address)
        try:
            conn.autocommit = True
            cur = conn.cursor()
            cur.execute("INSERT INTO emails (to_addr, subject) VALUES (%s, %s) RETURNING id",
                        ("di@example.org", "autocommit"))
            [(email_id,)] = cur.fetchall()
            assert isinstance(email_id, int) and email_id > 0
            assert _notices(conn) == []  # nothing staged
        finally:
            conn.close()

    await in_thread(run)
