"""Prepared statements and portals: the extended protocol's bookkeeping for one connection.

A connection keeps two dicts, its prepared statements and its portals, keyed by
name ("" is the unnamed one). This module makes their entries and finds them.
It pages a portal's rows and formats its RowDescription. It does no I/O: running
and describing a statement are the session's job, called by ``connection``.

Rules:
- Parse parses once and prepares one statement or none (the empty query).
  A name in use is 42P05, and several statements in one Parse are 42601.
- A statement's parameter count is taken at its first Bind: the types the
  client declared, or else the highest ``$n`` in the statement. A Bind with a
  different count is refused there (08P01), as Postgres does, not at Execute.
- A binary parameter whose type the client left open takes the type Postgres
  inferred at Describe, if Describe was asked.
- A portal runs its statement at its first Execute. Later Executes page the same
  rows, or pull them then (a read in parts: ``suspended``). A fetch that fills
  ``max_rows`` suspends without looking ahead. A portal fetched in parts counts, in
  its tag, only the rows of the last Execute.
- DISCARD, DEALLOCATE and CLOSE drop what they name here too (``forget``).
  Portals also end with their transaction, and a simple Query replaces the
  unnamed statement and portal (``connection`` decides when).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    CommandComplete,
    FieldDescription,
    NoData,
    Param,
    Parse,
    PortalRun,
    PortalSuspended,
    ReadyForQuery,
    RowDescription,
)

from ..engine.result import Notice, Released, Result
from ..engine.session import ParsedStatement
from ..sql.analysis import param_numbers

__all__ = [
    "ClientStatement",
    "Pending",
    "Portal",
    "bind",
    "fast_statement",
    "find_portal",
    "find_statement",
    "forget",
    "params_of",
    "prepare",
    "row_description",
    "run_head",
    "tag_bytes",
    "with_count",
]

_BIND_COMPLETE, _NO_DATA = BindComplete().encode(), NoData().encode()
Description = tuple[tuple[int, ...], tuple[FieldDescription, ...] | None]  # (param oids, fields)


@dataclass
class ClientStatement:
    """A statement the client prepared (Parse), under its name ("" the unnamed one)."""

    name: str
    stmt: ParsedStatement | None  # None: the empty query
    param_oids: tuple[int, ...]
    described: Description | None = None  # what Describe learnt from the session, once
    n_params: int = -1  # how many values a Bind must supply; -1: not counted yet
    rows: dict[tuple[int, ...], RowDescription] = field(default_factory=dict)  # by formats
    row_bytes: dict[tuple[int, ...], bytes] = field(default_factory=dict)  # run_head's


@dataclass
class Portal:
    """A bound statement: its parameters, its result formats, and how far it was read."""

    statement: ClientStatement
    params: list[Param]
    formats: tuple[int, ...]
    result: Result | None = None
    sent: int = 0  # rows already sent, for Execute with max_rows
    done: bool = False
    rest: Any = None  # a read in parts: what pulls its next rows (``engine.portal_parts.Rest``)

    def row_description(self, fields: Sequence[FieldDescription]) -> RowDescription:
        """The statement's fields in this portal's result formats (kept per formats)."""
        return row_description(self.statement, self.formats, fields)

    def fetch(self, max_rows: int) -> tuple[Sequence[Any], CommandComplete | PortalSuspended
                                                           | None]:
        """The rows one Execute sends (``max_rows`` <= 0: all that are left), and the
        message that ends them: PortalSuspended, CommandComplete, or none."""
        result = self.result
        assert result is not None, "a portal is fetched after its statement ran"
        if self.done:
            return (), CommandComplete(with_count(result.command_tag or "SELECT 0", 0))
        rows = result.data_rows
        start = self.sent
        end = len(rows) if max_rows <= 0 else min(len(rows), start + max_rows)
        self.sent = end
        chunked = bool(result.fields) and (max_rows > 0 or start > 0)
        if chunked and max_rows > 0 and end - start == max_rows:
            return rows[start:end], PortalSuspended()
        self.done = True
        if not result.command_tag:
            return rows[start:end], None
        tag = result.command_tag
        return rows[start:end], CommandComplete(with_count(tag, end - start) if chunked else tag)


@dataclass
class Pending:
    """Messages up to Sync: one client request, the scope of ``stable`` results."""

    request: Any = None
    notices: list[Notice] = field(default_factory=list)


def prepare(msg: Parse, statements: dict[str, ClientStatement],
            parsed: Sequence[ParsedStatement]) -> ClientStatement:
    """Parse: the statement (``parsed``, its text parsed), kept under its name."""
    if msg.name and msg.name in statements:
        raise errors.DuplicatePreparedStatement(
            f'prepared statement "{msg.name}" already exists')
    if len(parsed) > 1:
        raise errors.SyntaxError("cannot insert multiple commands into a prepared statement",
                                 hint="Prepare one statement at a time.")
    stmt = parsed[0] if parsed else None
    made = statements[msg.name] = ClientStatement(msg.name, stmt, tuple(msg.param_type_oids))
    return made


def bind(msg: Bind, statements: dict[str, ClientStatement], portals: dict[str, Portal]
         ) -> Portal:
    """Bind: the portal, kept under its name."""
    statement = find_statement(statements, msg.statement)
    if msg.portal and msg.portal in portals:
        raise errors.DuplicateCursor(f'cursor "{msg.portal}" already exists')  # Postgres's words
    oids = statement.param_oids
    if statement.n_params < 0:
        node = statement.stmt.node if statement.stmt else None
        statement.n_params = max([len(oids), *param_numbers(node)])
    needed = statement.n_params
    if len(msg.params) != needed:
        raise errors.ProtocolViolation(
            f"bind message supplies {len(msg.params)} parameters, but prepared "
            f'statement "{msg.statement}" requires {needed}')
    portal = portals[msg.portal] = Portal(statement, params_of(statement, msg),
                                          tuple(msg.result_formats))
    return portal


def params_of(statement: ClientStatement, msg: Bind) -> list[Param]:
    """A Bind's values as parameters: each with its format, and its type as declared at
    Parse, else as Describe inferred it (0: unknown)."""
    oids = statement.param_oids
    inferred = statement.described[0] if statement.described else ()
    return [
        Param(value, msg.param_format(i),
              (oids[i] if i < len(oids) else 0) or (inferred[i] if i < len(inferred) else 0))
        for i, value in enumerate(msg.params)
    ]


def row_description(statement: ClientStatement, formats: tuple[int, ...],
                    fields: Sequence[FieldDescription]) -> RowDescription:
    """A statement's fields in the result formats of a Bind (kept per formats)."""
    described = statement.rows.get(formats)
    if described is None:
        described = statement.rows[formats] = RowDescription(tuple(
            _with_format(f, _format(formats, i)) for i, f in enumerate(fields)))
    return described


def fast_statement(statements: dict[str, ClientStatement], run: PortalRun
                   ) -> ClientStatement | None:
    """The prepared statement of a portal run that may be a fast read (its statement
    known, its values counted, described if the run asks for its description)."""
    bind = run.bind
    found = statements.get(bind.statement)
    if (found is None or found.stmt is None or found.n_params != len(bind.params)
            or (run.describe and found.described is None)):
        return None
    return found


def run_head(statement: ClientStatement, run: PortalRun) -> bytes:
    """What a fast read's Bind and [Describe] answer, encoded (kept per formats):
    BindComplete, and the portal's RowDescription (or NoData) when asked. Like a
    relayed row, each is a message the normal phase always allows: no state to check."""
    if not run.describe:
        return _BIND_COMPLETE
    formats = tuple(run.bind.result_formats)
    head = statement.row_bytes.get(formats)
    if head is None:
        fields = statement.described[1] if statement.described else None
        head = statement.row_bytes[formats] = _BIND_COMPLETE + (
            _NO_DATA if fields is None else row_description(statement, formats, fields).encode())
    return head


@functools.lru_cache(maxsize=256)
def tag_bytes(tag: str) -> bytes:
    """A CommandComplete, encoded (a message the normal phase always allows)."""
    return CommandComplete(tag).encode()


# ReadyForQuery by transaction status, encoded (a message the normal phase always allows).
READY_BYTES = {status: ReadyForQuery(status).encode() for status in "IET"}


def find_statement(statements: dict[str, ClientStatement], name: str) -> ClientStatement:
    found = statements.get(name)
    if found is None:
        raise errors.InvalidSqlStatementName(f'prepared statement "{name}" does not exist')
    return found


def find_portal(portals: dict[str, Portal], name: str) -> Portal:
    found = portals.get(name)
    if found is None:
        raise errors.InvalidCursorName(f'portal "{name}" does not exist')
    return found


def forget(released: Released | None, statements: dict[str, ClientStatement],
           portals: dict[str, Portal]) -> None:
    """What a DISCARD, DEALLOCATE or CLOSE released, dropped from the protocol's own
    statements and portals."""
    if released is None:
        return
    for names, held in ((released.statements, statements), (released.portals, portals)):
        if names is None:
            held.clear()
        for name in names or ():
            held.pop(name, None)


def with_count(tag: str, count: int) -> str:
    """A command tag with its row count replaced ("INSERT 0 5" -> "INSERT 0 2")."""
    head, _, last = tag.rpartition(" ")
    return f"{head} {count}" if head and last.isdigit() else tag


def _format(formats: tuple[int, ...], i: int) -> int:
    if not formats:
        return 0
    return formats[0] if len(formats) == 1 else formats[i]


def _with_format(f: FieldDescription, fmt: int) -> FieldDescription:
    return FieldDescription(f.name, f.table_oid, f.column_attr, f.type_oid, f.type_size,
                            f.type_modifier, fmt)
