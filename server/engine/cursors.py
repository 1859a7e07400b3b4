"""Cursors: a read kept open between statements, its tool calls made as its rows are read.

``DECLARE`` plans a SELECT (gated, checked by the sidecar, its keys and call budget
checked) and calls nothing; ``FETCH`` and ``MOVE`` read it; ``CLOSE`` ends it. A
protocol portal's Execute with a row count reads through a ``Cursor`` too
(``portal_parts.py``: ``Cursor.next``).

Rules:
- Lazy where it can be (``cursor_reads.source``: a query that reads one resource
  through one call, row by row, ``cursor_statements.row_wise``): the tool's answer
  is kept open (``pull.Opened``) and only the rows a FETCH or an Execute needs are
  pulled, each part run on the sidecar as the query over those rows. A paged
  resource is asked for pages as rows are read. Any other query is run whole at
  its first FETCH, as a SELECT is; a portal's, at its first Execute, paged from
  memory by the portal.
- Every call is made once per cursor, whatever it is fetched and moved: the rows
  read are kept (encoded, as Postgres gave them), so a scroll reads them again
  rather than calling again; a NO SCROLL cursor (a portal's) keeps only the rows
  ahead of it.
- Positions, directions and counts are Postgres's own (``DoPortalRunFetch``,
  ``PortalRunSelect``): NO SCROLL refuses any backward step (55000);
  FETCH ABSOLUTE n before half the position rewinds. A FETCH whose Bind asks other
  formats than the cursor's gets its rows encoded again by the sidecar.
- A WITHOUT HOLD cursor ends with its transaction; a WITH HOLD one is read to its
  end at COMMIT (its calls finished inside the transaction, as Postgres
  materializes it), its rows moved into a temporary table of the session's pinned
  sidecar connection, and lives until CLOSE or the session's end; a ROLLBACK ends the
  held cursors the transaction declared, and ROLLBACK TO a savepoint the cursors
  declared after it (RELEASE keeps them). DECLARE outside a transaction block
  without HOLD is 25P01; a name in use 42P03; an unknown one 34000.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.background import hold
from glove_scratchpad.catalog import Step
from glove_scratchpad.wire import FieldDescription, Param

from ..sql.analysis import deparse
from ..sql.cursor_statements import FETCH_ALL, Declared, Fetch, declared, fetch_of
from ..sql.parse import ParsedStatement, parse
from . import cursor_reads, sidecar
from . import temp as temp_tables
from .cursor_reads import Source
from .result import Notice, Released, Result, ResultColumn
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Cursor", "Cursors", "open_cursor"]

_TABLES = itertools.count(1)  # the sidecar tables of held cursors' rows, numbered
_INT8 = 20
_MAX_PARAMS = 65535  # the protocol's limit of one statement's parameters
_HOLD_HINT = ("Open a transaction first (BEGIN), or declare it WITH HOLD to keep it after "
              "the statement.")


@dataclass(eq=False)
class Cursor:
    """One cursor: its rows read so far and where it stands, as Postgres's portal."""

    name: str
    statement: str
    declared: Declared
    fields: tuple[FieldDescription, ...]
    columns: list[ResultColumn]
    source: Source
    tx_declared: bool  # declared inside the transaction now open
    level: int = 0  # the savepoints open when it was declared: ROLLBACK TO drops it past them
    created: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(
        datetime.UTC))
    rows: list[Any] = field(default_factory=list)
    base: int = 0  # the rows read and let go before ``rows`` (NO SCROLL: passed for good)
    size: int = 0  # the bytes of ``rows``
    kept: tuple[str, int] | None = None  # the sidecar's table of its rows, and how many
    pos: int = 0  # Postgres's portalPos: the row it stands on, 1-based; 0 before the first
    at_start: bool = True
    at_end: bool = False
    notices: list[Notice] = field(default_factory=list)

    @property
    def scrollable(self) -> bool:
        return self.declared.scroll is not False

    @property
    def count(self) -> int:
        """The rows read so far: all of them once the source is exhausted."""
        return self.kept[1] if self.kept is not None else self.base + len(self.rows)

    async def _have(self, st: Statement, n: int) -> None:
        """At least ``n`` rows read, or all there are; kept whole, never past
        ``max_result_bytes``."""
        limit = st.services.limits.max_result_bytes
        while self.count < n and not self.source.exhausted:
            rows, notices = await self.source.more(st, min(n - self.count, FETCH_ALL))
            self.rows.extend(rows)
            self.notices.extend(x for x in notices if x not in self.notices)
            self.size += sum(len(r.raw_body) for r in rows)
            if self.size > limit:
                self.source.end()
                if not self.name:  # a protocol portal's: it holds one Execute's rows
                    raise errors.ProgramLimitExceeded(
                        f"one Execute's rows come to over {limit} bytes, the most one "
                        "result may keep", hint="Execute fewer rows at a time (a smaller "
                        "fetch size), select fewer columns, or narrow the query.")
                raise errors.ProgramLimitExceeded(
                    f'cursor "{self.name}" holds over {limit} bytes of rows, the most one '
                    "result may keep", hint="Select fewer columns, or narrow the query; a "
                    "cursor keeps the rows it read for FETCH to read again.")

    async def _slice(self, st: Statement, lo: int, hi: int) -> list[Any]:
        """Rows ``lo`` to ``hi`` (0-based, ``hi`` left out), from memory or the sidecar."""
        if self.kept is None:
            return self.rows[lo - self.base:hi - self.base]
        width = len(self.fields)
        got = await sidecar.pipeline(st, [Step(
            f"SELECT {', '.join(f'column{i + 1}' for i in range(width))} FROM "
            f"{self.kept[0]} WHERE _gs_n > $1 AND _gs_n <= $2 ORDER BY _gs_n",
            [Param(str(lo).encode(), 0, _INT8), Param(str(hi).encode(), 0, _INT8)],
            tuple(f.format for f in self.fields), own=True)], transaction="implicit")
        return got.rows

    async def keep(self, st: Statement) -> None:
        """Every row read, then moved into a temporary table of the session's pinned
        sidecar connection (a WITH HOLD cursor at COMMIT): its calls end here, and its
        rows live in the sidecar, not in the server's memory."""
        await self._have(st, FETCH_ALL)
        if self.kept is not None or not self.rows or not self.fields:
            return
        assert st.temp is not None
        await st.temp.pin(st.view.pool, st.user)
        table = f"pg_temp._gs_cursor_{next(_TABLES)}"
        width = len(self.fields) + 1
        steps = []
        per = max(_MAX_PARAMS // width, 1)
        for start in range(0, len(self.rows), per):
            part = self.rows[start:start + per]
            values = ", ".join("(" + ", ".join(f"${i * width + j + 1}" for j in range(width))
                               + ")" for i in range(len(part)))
            args = [p for n, row in enumerate(part, self.base + start + 1)
                    for p in (Param(str(n).encode(), 0, _INT8), *(
                        Param(v, f.format, f.type_oid)
                        for v, f in zip(row.values, self.fields, strict=True)))]
            names = ", ".join(("_gs_n", *(f"column{i + 1}" for i in range(width - 1))))
            sql = (f"CREATE TEMP TABLE {table} AS SELECT * FROM (VALUES {values}) v({names})"
                   if start == 0 else f"INSERT INTO {table} VALUES {values}")
            steps.append(Step(sql, args, rows=False, own=True))
        limit = st.services.limits.temp_table_limit_mb
        try:
            await sidecar.pipeline(st, [*steps, temp_tables.size_check(limit),
                                        temp_tables.COMMIT], transaction="write")
        except errors.ConfigurationLimitExceeded:
            raise temp_tables.over_limit(limit) from None
        self.kept, self.rows, self.size = (table, self.count), [], 0
    async def _select(self, st: Statement, forward: bool, count: int, out: list[Any] | None
                      ) -> int:
        """``PortalRunSelect``: up to ``count`` rows one way (FETCH_ALL: all), into ``out``
        (None: a MOVE's); how many."""
        if not forward and self.declared.scroll is False:
            raise _no_scroll()
        if (self.at_end if forward else self.at_start) or count <= 0:
            return 0
        here = self.pos + (1 if self.at_end else 0)  # the row a step starts from
        if forward:
            await self._have(st, here + count if count < FETCH_ALL else FETCH_ALL)
            lo, hi = here, min(here + count, self.count)
        else:
            lo, hi = max(here - 1 - count, 0), max(here - 1, 0)
        done = max(hi - lo, 0)
        if out is not None and done:
            got = await self._slice(st, lo, hi)
            out.extend(got if forward else got[::-1])
        if forward:
            if done:
                self.at_start = False
            if done < count:
                self.at_end = True
            self.pos += done
            if self.declared.scroll is False and self.kept is None:
                self._let_go(self.pos - 1)
        else:
            if done and self.at_end:
                self.at_end = False
                self.pos += 1
            if done < count:
                self.at_start, self.pos = True, 0
            else:
                self.pos -= done
        return done

    def _let_go(self, upto: int) -> None:
        """A NO SCROLL cursor's rows before ``upto`` are never read again: not kept (a
        protocol portal reads any number of rows in parts, holding only those ahead)."""
        drop = upto - self.base
        if drop > 0:
            self.size -= sum(len(r.raw_body) for r in self.rows[:drop])
            del self.rows[:drop]
            self.base = upto

    def _rewind(self) -> None:
        if self.at_start and not self.at_end:
            return
        if self.declared.scroll is False:
            raise _no_scroll()
        self.at_start, self.at_end, self.pos = True, False, 0

    async def fetch(self, st: Statement, f: Fetch) -> tuple[list[Any], int]:
        """``DoPortalRunFetch``: the rows a FETCH gives (none for MOVE) and its count."""
        out: list[Any] | None = None if f.move else []
        got = out if out is not None else []  # the same list: filled by the last step
        count, direction = f.count, f.direction
        if direction == "absolute":
            if count > 0:
                if self.pos == FETCH_ALL or count - 1 < self.pos // 2:
                    self._rewind()
                    if count > 1:
                        await self._select(st, True, count - 1, None)
                else:
                    pos = self.pos + (1 if self.at_end else 0)
                    if count <= pos:
                        await self._select(st, False, pos - count + 1, None)
                    elif count > pos + 1:
                        await self._select(st, True, count - pos - 1, None)
                return got, await self._select(st, True, 1, out)
            if count < 0:
                await self._select(st, True, FETCH_ALL, None)
                if count < -1:
                    await self._select(st, False, -count - 1, None)
                return got, await self._select(st, False, 1, out)
            self._rewind()
            return [], 0
        if direction == "relative":
            if count > 0:
                if count > 1:
                    await self._select(st, True, count - 1, None)
                return got, await self._select(st, True, 1, out)
            if count < 0:
                if count < -1:
                    await self._select(st, False, -count - 1, None)
                return got, await self._select(st, False, 1, out)
            direction = "forward"
        forward = direction == "forward"
        if count == 0:
            on_row = not self.at_start and not self.at_end
            if out is None:
                return [], 1 if on_row else 0
            if on_row:
                await self._select(st, False, 1, None)
                count, forward = 1, True
        if not forward and count == FETCH_ALL and out is None:
            moved = self.pos - 1 if self.pos > 0 and not self.at_end else self.pos
            self._rewind()
            return [], moved
        return got, await self._select(st, forward, count, out)

    async def next(self, st: Statement, n: int) -> list[Any]:
        """The next ``n`` rows (fewer at the end): a protocol portal's Execute with a row
        count; ``at_end`` once none are left."""
        rows, _ = await self.fetch(st, Fetch(self.name, "forward", n, False))
        return rows

    async def close(self, st: Statement | None = None) -> None:
        """Nothing more is read; its table in the sidecar is dropped (``st``: the statement
        that closes it; at the session's end the pinned connection takes it along)."""
        self.rows = []
        await self.source.close()
        kept, self.kept = self.kept, None
        if kept is not None and st is not None:
            await sidecar.pipeline(st, [Step(f"DROP TABLE IF EXISTS {kept[0]}", rows=False,
                                             own=True), temp_tables.COMMIT],
                                   transaction="write")

    def end(self) -> None:
        """Nothing more is read, from code that cannot wait (a portal let go): its call
        ends (``Source.end``); a table of its rows goes with the session's connection."""
        self.rows = []
        self.source.end()

    def row(self) -> dict[str, Any]:
        """Its row of pg_cursors."""
        return {"name": self.name, "statement": self.statement,
                "is_holdable": self.declared.hold, "is_binary": self.declared.binary,
                "is_scrollable": self.scrollable, "creation_time": self.created}


async def open_cursor(st: Statement, query: ParsedStatement, params: list[Param], d: Declared,
                      statement: str, *, tx_declared: bool) -> Cursor:
    """A cursor over a SELECT, planned, checked and budgeted, calling nothing yet: a
    DECLARE's, or a protocol portal's (``Cursor.next``). ``statement`` is the text its
    calls are audited under: the DECLARE's (a text that is the query's own would have its
    rows relayed to the client as they come, ``sidecar.run``, rather than kept)."""
    plan = st.plan(query)
    if len(params) < plan.max_param:
        raise errors.UndefinedParameter(
            f"there is no parameter ${len(params) + 1}",
            hint="Pass one value per $n of the cursor's query with the DECLARE.")
    _, described = await sidecar.check(st, query.sql, params)
    binary = 1 if d.binary else 0
    fields = tuple(_in_format(f, binary) for f in described or ())
    names = st.services.type_names
    columns = [ResultColumn(f.name, f.type_oid, names.get(f.type_oid, str(f.type_oid)))
               for f in fields]
    ctx = st.part(statement, timed=False)
    source = await cursor_reads.source(st, plan, params, ctx, (binary,))
    assert source is not None
    return Cursor(d.name, statement, d, fields, columns, source, tx_declared)


def _in_format(f: FieldDescription, fmt: int) -> FieldDescription:
    return FieldDescription(f.name, f.table_oid, f.column_attr, f.type_oid, f.type_size,
                            f.type_modifier, fmt)


def _formats(asked: tuple[int, ...], n: int, simple: bool) -> tuple[int, ...] | None:
    """The formats a FETCH's Bind asked for, one per column (the Bind rule: none is text
    for all); None for a simple Query: then a cursor's rows come as it was declared
    (BINARY or not), as Postgres sends them."""
    if simple and not asked:
        return None
    asked = asked or (0,)
    return asked * n if len(asked) == 1 else asked


async def _encoded(st: Statement, fields: tuple[FieldDescription, ...], rows: list[Any],
                   formats: tuple[int, ...]) -> list[Any]:
    """Rows kept in the cursor's format, as Postgres encodes them in ``formats``: each
    value goes back to the sidecar as a parameter of its own type, and comes out again."""
    if not rows or not fields:
        return rows
    width = len(fields)
    per = max(_MAX_PARAMS // width, 1)
    out: list[Any] = []
    for start in range(0, len(rows), per):
        part = rows[start:start + per]
        values = ", ".join("(" + ", ".join(f"${i * width + j + 1}" for j in range(width)) + ")"
                           for i in range(len(part)))
        args = [Param(v, f.format, f.type_oid) for row in part
                for v, f in zip(row.values, fields, strict=True)]
        got = await sidecar.pipeline(st, [Step(f"VALUES {values}", args, formats, own=True)],
                                     transaction="implicit")
        out.extend(got.rows)
    return out


def _no_scroll() -> errors.SqlError:
    return errors.ObjectNotInPrerequisiteState("cursor can only scan forward",
                                      hint="Declare it with SCROLL option to enable backward "
                                      "scan.")


class Cursors:
    """A session's cursors, by name."""

    def __init__(self) -> None:
        self.open: dict[str, Cursor] = {}
        self._closing: set[asyncio.Task[Any]] = set()

    def find(self, name: str) -> Cursor:
        found = self.open.get(name)
        if found is None:
            raise errors.InvalidCursorName(
                f'cursor "{name}" does not exist',
                hint="DECLARE it first, inside the same transaction unless WITH HOLD; "
                "SELECT name FROM pg_cursors lists those open.")
        return found

    def rows(self) -> list[dict[str, Any]]:
        return [c.row() for c in self.open.values()]

    def fields(self, node: Any) -> tuple[FieldDescription, ...] | None:
        """The columns a FETCH gives (Describe), in text as no Bind asked otherwise; None
        for the other cursor statements, and for an unknown cursor: as in Postgres, the
        error (34000) is Execute's, not Describe's."""
        found = self.open.get(node.portalname or "") if isinstance(node, ast.FetchStmt) \
            and not node.ismove else None
        return None if found is None else tuple(_in_format(f, 0) for f in found.fields)

    async def run(self, st: Statement, stmt: ParsedStatement, params: list[Param]) -> Result:
        """DECLARE, FETCH, MOVE or CLOSE."""
        node = stmt.node
        if isinstance(node, ast.DeclareCursorStmt):
            return await self.declare(st, stmt, params)
        if isinstance(node, ast.FetchStmt):
            f = fetch_of(node)
            cursor = self.find(f.name)
            rows, count = await cursor.fetch(st, f)
            notices, cursor.notices = cursor.notices, []
            if f.move:
                return Result(f"MOVE {count}", notices=notices,
                              touched=cursor.source.touched())
            fields = cursor.fields
            wanted = _formats(st.formats, len(fields), st.request.simple)
            if wanted is not None and wanted != tuple(x.format for x in fields):
                fields = tuple(_in_format(x, w) for x, w in zip(fields, wanted, strict=True))
                rows = await _encoded(st, cursor.fields, rows, wanted)
            return Result(f"FETCH {count}", columns=cursor.columns, fields=fields,
                          data_rows=rows, notices=notices, touched=cursor.source.touched())
        assert isinstance(node, ast.ClosePortalStmt)
        if node.portalname is None:  # CLOSE ALL
            await self.close_all(st)
            return Result("CLOSE CURSOR ALL", released=Released(portals=None))
        cursor = self.find(node.portalname)
        del self.open[cursor.name]
        await cursor.close(st)
        return Result("CLOSE CURSOR", released=Released(portals=frozenset((cursor.name,))))

    async def declare(self, st: Statement, stmt: ParsedStatement, params: list[Param]
                      ) -> Result:
        d = declared(stmt.node)
        idle = st.tx.state is TxState.IDLE
        if idle and not d.hold:
            raise errors.NoActiveSqlTransaction(
                "DECLARE CURSOR can only be used in transaction blocks", hint=_HOLD_HINT)
        if d.name in self.open:
            raise errors.DuplicateCursor(f'cursor "{d.name}" already exists',
                                         hint=f"CLOSE {d.name} first, or choose another name.")
        query = parse(deparse(d.query))[0]
        cursor = await open_cursor(st, query, params, d, stmt.sql, tx_declared=not idle)
        if idle:  # WITH HOLD outside a block: its implicit transaction commits at once
            await cursor.keep(st)
        cursor.level = len(st.tx.savepoints)
        self.open[d.name] = cursor
        return Result("DECLARE CURSOR", notices=cursor.notices)

    async def materialize(self, st: Statement) -> None:
        """Before COMMIT: the WITH HOLD cursors the transaction declared read to their end,
        their calls made inside it."""
        for cursor in self.open.values():
            if cursor.declared.hold and cursor.tx_declared:
                await cursor.keep(st)

    async def transaction_ended(self, *, committed: bool) -> None:
        """COMMIT keeps the WITH HOLD cursors; every other cursor of the transaction ends
        (a ROLLBACK's held ones too, as in Postgres)."""
        for name, cursor in list(self.open.items()):
            if cursor.declared.hold and (committed or not cursor.tx_declared):
                cursor.tx_declared, cursor.level = False, 0  # no savepoint of a later one
                continue
            del self.open[name]
            await cursor.close()

    async def savepoint_ended(self, st: Statement, level: int, *, rolled_back: bool) -> None:
        """ROLLBACK TO or RELEASE of the savepoint with ``level`` others before it: ROLLBACK
        TO drops the cursors declared after it, as Postgres drops a subtransaction's
        portals (the others keep their positions); RELEASE gives them to the enclosing one."""
        for name, cursor in list(self.open.items()):
            if cursor.level <= level:
                continue
            if rolled_back:
                del self.open[name]
                await cursor.close(st)
            else:
                cursor.level = level

    async def close_all(self, st: Statement | None = None) -> None:
        cursors, self.open = list(self.open.values()), {}
        for cursor in cursors:
            await cursor.close(st)

    def end(self) -> None:
        """The session ended: its cursors close (a generator's ``close`` in a task)."""
        if self.open:
            hold(self.close_all(), self._closing)
