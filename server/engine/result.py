"""What a statement gives back: rows, the command tag, notices, calls and staged writes.

Rules:
- A ``Result`` holds its rows one way: as Postgres encoded them (``fields`` and
  ``data_rows``, in the formats the client asked for). The wire relays them as
  they are; ``rows`` decodes them for the Python API on first use. An answer the
  interpreter makes itself (EXPLAIN, a scratchpad view) is encoded the same way
  (``Result.text``), so every client sees every answer.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from glove_scratchpad.catalog import decode_row
from glove_scratchpad.errors import SUCCESSFUL_COMPLETION, message_fields
from glove_scratchpad.wire import DataRow, FieldDescription

TEXT_OID = 25

__all__ = ["Call", "ChainLink", "Notice", "Result", "ResultColumn", "StagedWrite", "Touched",
           "new_key"]


@dataclass(frozen=True, slots=True)
class ResultColumn:
    name: str
    type_oid: int
    type_name: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A NoticeResponse: severity NOTICE or WARNING, with its SQLSTATE."""

    message: str
    severity: str = "NOTICE"
    code: str = SUCCESSFUL_COMPLETION
    detail: str | None = None
    hint: str | None = None

    def as_fields(self) -> dict[str, str]:
        return message_fields(self.severity, self.code, self.message, self.detail, self.hint)


@dataclass(frozen=True, slots=True)
class Released:
    """What a DISCARD, DEALLOCATE or CLOSE lets go of the protocol's own state: the
    prepared statements and portals it names (None: every one)."""

    statements: frozenset[str] | None = frozenset()
    portals: frozenset[str] | None = frozenset()


@dataclass(slots=True)
class Touched:
    """One distinct (resource, verb, arguments) of a statement, and how often it was called."""

    resource: str
    verb: str
    arguments: dict[str, Any]
    calls: int = 0  # 0 when the rows came from the volatility cache
    rows: int = 0
    ms: float = 0.0  # how long the statement waited for its rows (EXPLAIN ANALYZE)
    kept: bool = False  # read from its kept table in the sidecar


def new_key() -> str:
    """A fresh idempotency key."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class Call:
    """One write a staged statement will make: a verb of a resource and its input.

    ``key`` is its idempotency key: made when it is staged, journaled with it, and
    passed (``CallContext.idempotency_key``) to every attempt to make it."""

    verb: str
    rows: tuple[Any, ...] = ()  # insert; a fold's update: the row's new values
    changes: dict[str, Any] | None = None  # update
    bindings: dict[str, Any] | None = None  # update, delete: the keys and filters' values
    # update, delete: the filters' conditions the WHERE gave, as Bindings.where has them
    where: dict[str, tuple[tuple[str, Any], ...]] | None = None
    # A fold (staged.py): the row of a staged INSERT it changes, (write id, row number);
    # it is sent with that INSERT, never as a call of its own.
    staged_row: tuple[int, int] | None = None
    key: str = field(default_factory=new_key, compare=False)

    def describe(self, resource: str) -> str:
        if self.staged_row is not None:
            write, row = self.staged_row
            done = "changed" if self.verb == "update" else "dropped"
            return f"{resource}: row {row + 1} of #{write} {done} before it is sent"
        if self.verb == "insert":
            return f"{resource}.insert({len(self.rows)} row{'s' if len(self.rows) != 1 else ''})"
        if self.verb == "update":
            return f"{resource}.update({self.changes!r}, {self.bindings!r})"
        return f"{resource}.delete({self.bindings!r})"


class ChainLink(Protocol):
    """A staged write's place in a statement whose WITH holds writes (``chains.Link``):
    what COMMIT asks of it."""

    deferred: bool  # planned again at COMMIT, from what the writes it reads returned

    def after(self) -> list[int]:
        """The staged writes (ids) whose returned rows it reads."""
        ...

    async def replan(self, session: Any, write: StagedWrite, ctx: Any) -> None:
        """Plan the write again, now that the writes it reads have fired."""
        ...

    async def fired(self, session: Any, write: StagedWrite, rows: list[dict]) -> None:
        """The write fired: keep what its RETURNING gives, for the parts after it."""
        ...


@dataclass(slots=True)
class StagedWrite:
    """A write statement inside BEGIN: recorded with the calls it will make at COMMIT."""

    id: int
    resource: str
    verb: str
    statement: str
    calls: list[Call]
    status: str = "staged"  # staged, fired, failed, in doubt, not run
    error: str | None = None
    staged_at: float = field(default_factory=time.time)
    journal: list[tuple[int, int]] = field(default_factory=list)  # (txid, seq) of each call
    # Its place in a statement whose WITH holds writes: planned again at COMMIT when it
    # reads what an INSERT staged before it returns.
    link: ChainLink | None = None

    @property
    def summary(self) -> str:
        return "; ".join(c.describe(self.resource) for c in self.calls) or "no call"


@dataclass(slots=True)
class Result:
    """The outcome of one statement (or, for a script, of its last statement)."""

    command_tag: str
    columns: list[ResultColumn] = field(default_factory=list)
    # As Postgres encoded them, in the formats asked for: what the wire relays.
    fields: tuple[Any, ...] = ()  # wire FieldDescriptions
    data_rows: list[Any] = field(default_factory=list)  # wire DataRows
    notices: list[Notice] = field(default_factory=list)
    touched: list[Touched] = field(default_factory=list)
    staged: list[StagedWrite] = field(default_factory=list)
    committed: list[StagedWrite] = field(default_factory=list)
    statements: list[Result] = field(default_factory=list)  # every statement of a script
    references: list[dict[str, Any]] = field(default_factory=list)  # EXPLAIN: per reference
    parameters: dict[str, str] = field(default_factory=dict)  # settings a SET changed
    released: Released | None = None  # the protocol's statements and portals it let go
    # Its rows went to the client as they came (a ``stream.Stream``: how many, how many
    # cut): ``data_rows`` holds none of them.
    relayed: Any = None
    _rows: list[tuple[Any, ...]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def text(cls, tag: str, names: Sequence[str], rows: Iterable[Sequence[str | None]],
             **kw: Any) -> Result:
        """An answer made by the interpreter: text columns, encoded as Postgres would."""
        return cls(tag, columns=[ResultColumn(n, TEXT_OID, "text") for n in names],
                   fields=tuple(FieldDescription(n, type_oid=TEXT_OID) for n in names),
                   data_rows=[DataRow(None if v is None else v.encode() for v in row)
                              for row in rows], **kw)

    @property
    def rows(self) -> list[tuple[Any, ...]]:
        """The rows as Python values, decoded from ``data_rows`` (text or binary)."""
        if self._rows is None or len(self._rows) != len(self.data_rows):
            oids = tuple(f.type_oid for f in self.fields)
            formats = tuple(f.format for f in self.fields)
            self._rows = [decode_row(oids, r, formats) for r in self.data_rows]
        return self._rows

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def dicts(self) -> list[dict[str, Any]]:
        names = self.column_names
        return [dict(zip(names, row, strict=True)) for row in self.rows]

    def calls(self, resource: str, verb: str | None = None) -> int:
        """How many times a resource was called by this result's statements."""
        parts = self.statements or [self]
        return sum(
            t.calls for r in parts for t in r.touched
            if t.resource == resource and (verb is None or t.verb == verb)
        )
