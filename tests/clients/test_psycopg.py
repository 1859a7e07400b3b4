"""psycopg 3 against the wire server, in each of its ways of talking.

- simple: ``ClientCursor``, values bound client-side, one Query message;
- extended: the default cursor, values bound server-side (Parse/Bind/Execute;
  psycopg still sends a statement without parameters as a simple Query);
- binary: the extended protocol with binary results;
- pipeline: the extended protocol in pipeline mode, writes by ``executemany``.

The staged statement text tells the protocols apart: bound client-side, the
values are in it; bound server-side, it keeps its ``$n``.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus

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

MODES = ["simple", "extended", "binary", "pipeline"]
INSERT_EMAIL = "INSERT INTO emails (to_addr, subject) VALUES (%s, %s)"


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


class Client:
    """One psycopg connection that sends every statement the way its mode does."""

    def __init__(self, dsn: str, mode: str) -> None:
        factory = psycopg.ClientCursor if mode == "simple" else psycopg.Cursor
        self.mode = mode
        self.conn = psycopg.connect(dsn, autocommit=True, cursor_factory=factory)
        # (severity, message, hint): a Diagnostic is only readable inside the callback.
        self.notices: list[tuple[str | None, str | None, str | None]] = []
        self.conn.add_notice_handler(lambda d: self.notices.append(
            (d.severity_nonlocalized, d.message_primary, d.message_hint)))

    def cursor(self) -> psycopg.Cursor[Any]:
        return self.conn.cursor(binary=self.mode == "binary")

    def execute(self, sql: str, params: Any = None) -> psycopg.Cursor[Any]:
        cur = self.cursor()
        if self.mode == "pipeline":
            with self.conn.pipeline():
                cur.execute(sql, params)
        else:
            cur.execute(sql, params, prepare=False)
        want = 1 if self.mode == "binary" else 0
        if cur.pgresult is not None and cur.pgresult.nfields:
            assert cur.pgresult.fformat(0) == want  # the format the mode asked for
        return cur

    def rows(self, sql: str, params: Any = None, tag: str | None = None) -> list[tuple]:
        cur = self.execute(sql, params)
        if tag is not None:
            assert cur.statusmessage == tag
        return cur.fetchall() if cur.description is not None else []

    def messages(self) -> list[str]:
        assert {n[0] for n in self.notices} <= {"NOTICE"}
        out = [n[1] or "" for n in self.notices]
        self.notices.clear()
        return out

    @property
    def status(self) -> TransactionStatus:
        return self.conn.info.transaction_status

    def close(self) -> None:
        self.conn.close()


def _with_client(dsn: str, mode: str, fn: Any) -> Any:
    client = Client(dsn, mode)
    try:
        return fn(client)
    finally:
        client.close()


async def test_discovery(dsn, mode):
    def run(c: Client) -> None:
        assert c.rows(TABLES_SQL, tag=f"SELECT {len(TABLES)}") == [(t,) for t in TABLES]
        assert c.rows(TASK_COLUMNS_SQL, tag="SELECT 4") == TASK_COLUMNS

    await in_thread(_with_client, dsn, mode, run)


async def test_read_with_pushed_down_key(dsn, mode):
    def run(c: Client) -> None:
        assert c.rows(WEB_SQL, tag="SELECT 2") == WEB_ROWS
        assert c.rows("SELECT id, name, price FROM items WHERE id = 7", tag="SELECT 1") == [ITEM_7]
        assert c.messages() == []

    await in_thread(_with_client, dsn, mode, run)


async def test_parameterised_query(dsn, mode):
    def run(c: Client) -> None:
        assert c.rows("SELECT id, name, price FROM items WHERE id = %s", (7,),
                      tag="SELECT 1") == [ITEM_7]
        assert c.rows("SELECT title, rank FROM web WHERE query = %s ORDER BY rank",
                      ("postgresql",), tag="SELECT 2") == WEB_ROWS
        assert c.rows("SELECT name FROM items WHERE id IN (%s, %s) ORDER BY id", (3, 4),
                      tag="SELECT 2") == [("item 3",), ("item 4",)]
        # A key bound to NULL matches nothing, calls nothing, and says so.
        assert c.rows("SELECT title FROM web WHERE query = %s", (None,), tag="SELECT 0") == []
        [notice] = c.messages()
        assert notice.startswith('resource "web" was not called: no row can match query = ')

    await in_thread(_with_client, dsn, mode, run)


async def test_join(dsn, mode):
    def run(c: Client) -> None:
        assert c.rows(JOIN_SQL, tag="SELECT 3") == JOIN_ROWS

    await in_thread(_with_client, dsn, mode, run)


def _staged_statement(mode: str, to: str, subject: str) -> str:
    if mode == "simple":
        return f"INSERT INTO emails (to_addr, subject) VALUES ('{to}', '{subject}')"
    return "INSERT INTO emails (to_addr, subject) VALUES ($1, $2)"


async def test_staged_write_and_commit(dsn, mode):
    to = f"ann-{mode}@example.org"

    def run(c: Client) -> None:
        assert c.rows("BEGIN", tag="BEGIN") == []
        if c.mode == "pipeline":
            cur = c.cursor()
            with c.conn.pipeline():
                cur.executemany(INSERT_EMAIL, [(to, "one"), (to, "two")])
            assert (cur.rowcount, cur.statusmessage) == (2, "INSERT 0 1")
            n = 2
        else:
            cur = c.execute(INSERT_EMAIL, (to, "one"))
            assert (cur.statusmessage, cur.rowcount) == ("INSERT 0 1", 1)
            n = 1
        assert c.status == TransactionStatus.INTRANS
        assert [hint for _, _, hint in c.notices] == [STAGED_HINT] * n
        assert c.messages() == [staged_notice(i) for i in range(1, n + 1)]
        assert c.rows(STAGED_SQL, tag=f"SELECT {n}") == staged_rows(n)
        statements = c.rows("SELECT statement FROM scratchpad.staged ORDER BY id")
        subjects = ["one", "two"][:n]
        assert statements == [(_staged_statement(c.mode, to, s),) for s in subjects]

        assert c.rows("COMMIT", tag="COMMIT") == []
        assert c.status == TransactionStatus.IDLE
        assert c.messages() == [fired_notice(i) for i in range(1, n + 1)]
        assert c.rows(STAGED_SQL, tag="SELECT 0") == []

        # Outside a transaction an INSERT fires at once: RETURNING shows the new row.
        [(email_id, to_addr, subject)] = c.rows(
            INSERT_EMAIL + " RETURNING id, to_addr, subject", (to, "now"), tag="INSERT 0 1")
        assert isinstance(email_id, int) and email_id > 0
        assert (to_addr, subject) == (to, "now")

    await in_thread(_with_client, dsn, mode, run)


async def test_error_then_same_connection(dsn, mode):
    def expect_missing_key(c: Client) -> None:
        with pytest.raises(pg_errors.InvalidParameterValue) as info:
            c.execute(MISSING_KEY_SQL)
        diag = info.value.diag
        assert info.value.sqlstate == MISSING_KEY_STATE
        assert (diag.message_primary, diag.message_hint) == (MISSING_KEY_MESSAGE,
                                                             MISSING_KEY_HINT)
        assert (diag.table_name, diag.column_name) == ("web", "query")

    def run(c: Client) -> None:
        expect_missing_key(c)
        assert c.status == TransactionStatus.IDLE
        assert c.rows("SELECT id, name, price FROM items WHERE id = %s", (7,)) == [ITEM_7]
        # Inside a transaction the error aborts it until ROLLBACK, as in Postgres.
        c.rows("BEGIN", tag="BEGIN")
        expect_missing_key(c)
        assert c.status == TransactionStatus.INERROR
        with pytest.raises(pg_errors.InFailedSqlTransaction) as info:
            c.execute("SELECT 1")
        assert info.value.sqlstate == ABORTED_STATE
        c.rows("ROLLBACK", tag="ROLLBACK")
        assert c.status == TransactionStatus.IDLE
        assert c.rows(WEB_SQL, tag="SELECT 2") == WEB_ROWS
        # An error from the sidecar itself keeps Postgres's SQLSTATE and position.
        with pytest.raises(pg_errors.UndefinedColumn) as undefined:
            c.execute("SELECT nope FROM items")
        assert (undefined.value.sqlstate, undefined.value.diag.statement_position) == ("42703",
                                                                                       "8")
        assert c.rows(JOIN_SQL) == JOIN_ROWS
        # A statement that does not parse is refused before anything runs (at Parse).
        c.rows("BEGIN", tag="BEGIN")
        with pytest.raises(pg_errors.SyntaxError) as syntax:
            c.execute("SELEC name FROM items WHERE id = %s", (1,))
        assert (syntax.value.sqlstate, syntax.value.diag.message_hint) == (
            "42601", "Check the statement against PostgreSQL's grammar.")
        assert c.status == TransactionStatus.INERROR
        c.rows("ROLLBACK", tag="ROLLBACK")
        assert c.rows("SELECT name FROM items WHERE id = %s", (1,)) == [("item 1",)]

    await in_thread(_with_client, dsn, mode, run)


async def test_pipeline_error_aborts_the_rest_of_the_pipeline_only(dsn):
    def run(c: Client) -> None:
        conn = c.conn
        with pytest.raises(pg_errors.InvalidParameterValue) as info:  # noqa: SIM117
            with conn.pipeline():
                first = conn.execute("SELECT name FROM items WHERE id = %s", (1,))
                conn.execute(MISSING_KEY_SQL)
                conn.execute("SELECT name FROM items WHERE id = %s", (2,))
        assert info.value.diag.message_hint == MISSING_KEY_HINT
        assert first.fetchall() == [("item 1",)]
        assert c.status == TransactionStatus.IDLE
        with conn.pipeline():
            again = conn.execute("SELECT name FROM items WHERE id = %s", (2,))
        assert again.fetchall() == [("item 2",)]

    await in_thread(_with_client, dsn, "pipeline", run)


async def test_simple_protocol_script_in_one_query(dsn):
    """BEGIN; INSERT; SELECT staged; COMMIT in one Query message: one result each."""

    def run(c: Client) -> None:
        cur = c.conn.cursor()
        cur.execute("BEGIN; INSERT INTO emails (to_addr, subject) VALUES ('s@example.org', 'x');"
                    " SELECT id, status FROM scratchpad.staged; COMMIT")
        tags = []
        rows = []
        while True:
            tags.append(cur.statusmessage)
            if cur.description:
                rows.append(cur.fetchall())
            if not cur.nextset():
                break
        assert tags == ["BEGIN", "INSERT 0 1", "SELECT 1", "COMMIT"]
        assert rows == [[(1, "staged")]]
        assert c.messages() == [staged_notice(1), fired_notice(1)]
        assert c.status == TransactionStatus.IDLE

    await in_thread(_with_client, dsn, "simple", run)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
async def test_named_prepared_statement_is_reused(dsn, server, binary):
    sql = "SELECT id, name, price FROM items WHERE id = %s"
    c = await in_thread(Client, dsn, "binary" if binary else "extended")
    try:
        def run() -> list[Any]:
            out = [c.conn.execute(sql, (i,), prepare=True, binary=binary).fetchall()
                   for i in (7, 8)]
            with pytest.raises(pg_errors.InvalidParameterValue):
                c.conn.execute(MISSING_KEY_SQL)
            out.append(c.conn.execute(sql, (9,), prepare=True, binary=binary).fetchall())
            return out

        assert await in_thread(run) == [[ITEM_7], [(8, "item 8", 12.0)], [(9, "item 9", 13.5)]]
        handler = handler_of(server, c.conn.info.backend_pid)
        named = [(name, p.stmt.sql) for name, p in handler.statements.items() if name]
        # One Parse of a named statement; every later execution only Binds it.
        assert named == [(named[0][0], "SELECT id, name, price FROM items WHERE id = $1")]
    finally:
        await in_thread(c.close)


async def test_nested_transactions_are_savepoints(dsn, mode):
    """psycopg nests ``conn.transaction()`` with SAVEPOINT; an inner failure or
    ``Rollback`` discards only the writes staged inside it."""

    def run(c: Client) -> None:
        with c.conn.transaction():
            c.execute(INSERT_EMAIL, ("ha@example.org", "outer"))
            with pytest.raises(pg_errors.InvalidParameterValue):  # noqa: SIM117
                with c.conn.transaction():
                    c.execute(INSERT_EMAIL, ("ha@example.org", "inner"))
                    c.execute(MISSING_KEY_SQL)
            with c.conn.transaction():
                c.execute(INSERT_EMAIL, ("ha@example.org", "rolled back"))
                raise psycopg.Rollback()
            assert c.status == TransactionStatus.INTRANS
            assert c.rows("SELECT id, status FROM scratchpad.staged") == [(1, "staged")]
        assert c.status == TransactionStatus.IDLE
        assert c.messages() == [staged_notice(1), staged_notice(2), "discarded 1 staged write",
                                staged_notice(3), "discarded 1 staged write", fired_notice(1)]

    await in_thread(_with_client, dsn, mode, run)
