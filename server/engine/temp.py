"""A session's temporary tables: its own sidecar connection, pinned for its life.

Rules:
- A session's first temporary table pins a pooled connection to it (its slot
  taken) until the session ends; from then on every statement of the session
  runs there, so its temporary tables are seen by it and by no other session.
  The fast path of compiled reads is not taken by a pinned session: it answers
  on whichever idle connection is free.
- At the session's end the connection is closed, never pooled again: Postgres
  drops its temporary tables with it. A pinned connection found broken (a
  cancel cut its reply) is let go the same way, and its tables with it.
- The DDL (CREATE, DROP, TRUNCATE) and the writes to temporary tables run in
  a transaction that commits, at once: they are not part of the session's
  virtual transaction, which stages outbound writes only. A ROLLBACK does not
  undo them, and a NOTICE says so when one runs inside a transaction block.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.catalog import SidecarConnection, Step

from ..sql.temp_tables import is_temp_statement, temp_into, temp_names
from .result import Notice
from .transaction import TxState

if TYPE_CHECKING:
    from glove_scratchpad.catalog import Pool

    from .statement import Statement

__all__ = ["COMMIT", "TempTables", "is_temp_statement", "lease", "writes_temp"]

COMMIT = Step("COMMIT", rows=False, own=True)
NOT_STAGED = ("a temporary table's rows are not staged: this change is already made, and "
              "ROLLBACK does not undo it")


class TempTables:
    """The session's temporary tables by name, and the connection they live on."""

    __slots__ = ("conn", "names", "owner", "pool")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.conn: SidecarConnection | None = None
        self.pool: Pool | None = None
        self.owner: Hashable = None  # whose share of the pool its slot counts in

    def has(self, name: str) -> bool:
        return name in self.names

    @property
    def pinned(self) -> bool:
        return self.conn is not None

    async def pin(self, pool: Pool, owner: Hashable) -> None:
        """Take a pooled connection (and its slot, of ``owner``'s share) for the rest of
        the session."""
        if self.conn is not None and (self.conn.broken or self.conn.closed):
            self.close()
        if self.conn is None:
            self.conn = await pool.acquire(owner).__aenter__()
            self.pool, self.owner = pool, owner

    def close(self) -> None:
        """Let the connection go, closed: its temporary tables go with it."""
        conn, pool = self.conn, self.pool
        self.conn, self.pool = None, None
        self.names.clear()
        if conn is not None and pool is not None:
            conn.broken = True  # never pooled again: it holds the session's tables
            pool.give_back(conn, self.owner)


@asynccontextmanager
async def lease(st: Statement) -> AsyncIterator[SidecarConnection]:
    """The session's pinned connection, or a pooled one for this statement."""
    temp = st.temp
    if temp is not None and temp.conn is not None:
        if temp.conn.broken or temp.conn.closed:
            temp.close()
        else:
            yield temp.conn
            return
    async with st.view.pool.acquire(st.user) as conn:
        yield conn


def writes_temp(node: Any, temp: TempTables | None) -> bool:
    """Whether the statement makes, drops or writes a temporary table: it commits."""
    if is_temp_statement(node):
        return True
    if temp is None or not temp.names:
        return False
    if isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
        rel = node.relation
        return rel is not None and rel.schemaname is None and rel.relname in temp.names
    return False


def made(st: Statement, node: Any) -> None:
    """Remember what a temporary-table statement that ran made or dropped; the NOTICE."""
    temp = st.temp
    assert temp is not None
    if isinstance(node, ast.DropStmt):
        temp.names.difference_update(temp_names(node))
    elif isinstance(node, ast.CreateStmt | ast.CreateTableAsStmt) or temp_into(node):
        temp.names.update(temp_names(node))


def size_check(limit_mb: int) -> Step:
    """The step before COMMIT that fails (53400) when the session's temporary tables,
    with their indexes and TOAST, hold more than ``limit_mb``: the change is undone."""
    return Step(
        "DO $$BEGIN IF (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM "
        "pg_class c WHERE c.relnamespace = pg_my_temp_schema() AND c.relkind = 'r') > "
        f"{int(limit_mb) * 1024 * 1024} THEN RAISE EXCEPTION 'over' USING ERRCODE = "
        f"'{errors.ConfigurationLimitExceeded.sqlstate}'; "
        "END IF; END$$", rows=False, own=True)


def over_limit(limit_mb: int) -> errors.SqlError:
    return errors.ConfigurationLimitExceeded(
        f"the session's temporary tables would hold more than temp_table_limit_mb "
        f"({limit_mb} MB): the statement is undone",
        hint="Keep fewer rows or columns (filter or aggregate first), or DROP or TRUNCATE "
        "a temporary table you no longer need.")


def notice(st: Statement) -> Notice | None:
    """The NOTICE a temporary-table change inside a transaction block gets."""
    if st.tx.state is TxState.IDLE:
        return None
    return Notice(NOT_STAGED, hint="Write the rows again (or DROP the table) to undo them.")
