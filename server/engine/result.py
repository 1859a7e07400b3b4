"""What a statement gives back: rows, the command tag, notices, calls and staged writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glove_scratchpad.errors import message_fields

__all__ = ["Call", "Notice", "Result", "ResultColumn", "StagedWrite", "Touched"]


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
    code: str = "00000"
    detail: str | None = None
    hint: str | None = None

    def as_fields(self) -> dict[str, str]:
        return message_fields(self.severity, self.code, self.message, self.detail, self.hint)


@dataclass(slots=True)
class Touched:
    """One distinct (resource, verb, arguments) of a statement, and how often it was called."""

    resource: str
    verb: str
    arguments: dict[str, Any]
    calls: int = 0  # 0 when the rows came from the volatility cache
    rows: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    """One write a staged statement will make: a verb of a resource and its input."""

    verb: str
    rows: tuple[Any, ...] = ()  # insert
    changes: dict[str, Any] | None = None  # update
    bindings: dict[str, Any] | None = None  # update, delete

    def describe(self, resource: str) -> str:
        if self.verb == "insert":
            return f"{resource}.insert({len(self.rows)} row{'s' if len(self.rows) != 1 else ''})"
        if self.verb == "update":
            return f"{resource}.update({self.changes!r}, {self.bindings!r})"
        return f"{resource}.delete({self.bindings!r})"


@dataclass(slots=True)
class StagedWrite:
    """A write statement inside BEGIN: recorded with the calls it will make at COMMIT."""

    id: int
    resource: str
    verb: str
    statement: str
    calls: list[Call]
    status: str = "staged"  # staged, fired, failed, not run
    error: str | None = None

    @property
    def summary(self) -> str:
        return "; ".join(c.describe(self.resource) for c in self.calls) or "no call"


@dataclass(slots=True)
class Result:
    """The outcome of one statement (or, for a script, of its last statement)."""

    command_tag: str
    columns: list[ResultColumn] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)  # decoded (Python API)
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
