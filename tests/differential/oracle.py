"""The differential oracle: each case through the server and on the reference, compared.

The server serves ``world.py``'s resources; the reference is a database of plain
tables holding the same rows, on the same Postgres. Both are reached the way users
reach them, with psycopg over the wire.

Rules of the comparison:
- Two answers are equal as multisets of rows, with the same column names; in order
  where an ORDER BY fixes every row's place; a LIMIT without a total order must give
  as many rows, each one of the unlimited answer.
- A statement the server refuses while Postgres answers must name its reason: a
  SQLSTATE of its own class (never XX000) and a HINT. Refusals are counted, never
  taken for agreement in silence.
- A statement both refuse must be refused with the same SQLSTATE.
- After a write fires (outside a transaction, or at COMMIT) the reference's table
  holds the tool's rows again (``World.records``): the tool is the truth.
- A refusal inside a transaction ends the case on both sides (ROLLBACK).
"""

from __future__ import annotations

import collections
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import psycopg

from .generate import Case, Step
from .world import COLUMNS, World

__all__ = ["Answer", "Disagreement", "Oracle", "Report"]


@dataclass(frozen=True)
class Answer:
    """What one side said: its columns, rows and tag, or its error."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    tag: str = ""
    error: tuple[str, str, str | None] | None = None  # (sqlstate, message, hint)

    def shown(self) -> str:
        if self.error is not None:
            return f"ERROR {self.error[0]}: {self.error[1]} (HINT: {self.error[2]})"
        rows = ", ".join(map(repr, self.rows[:8])) + (" …" if len(self.rows) > 8 else "")
        return f"{self.tag} {list(self.columns)} [{rows}]"


@dataclass(frozen=True)
class Disagreement:
    case: Case
    step: Step
    why: str
    server: Answer
    reference: Answer

    def __str__(self) -> str:
        return (f"[{self.case.family}] {self.why}\n  case: {self.case.text}\n  step: "
                f"{self.step.sql}\n  server:    {self.server.shown()}\n  reference: "
                f"{self.reference.shown()}")


@dataclass
class Report:
    statements: int = 0
    cases: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    refusals: collections.Counter[str] = field(default_factory=collections.Counter)

    def summary(self) -> str:
        lines = [f"{self.cases} cases, {self.statements} statements, "
                 f"{len(self.disagreements)} disagreements, "
                 f"{sum(self.refusals.values())} refusals"]
        lines += [f"  refused {n}x: {why}" for why, n in self.refusals.most_common()]
        kinds = collections.Counter(f"[{d.case.family}] {d.why}" for d in self.disagreements)
        lines += [f"  disagreed {n}x: {kind}" for kind, n in kinds.most_common()]
        lines += [str(d) for d in self.disagreements[:20]]
        return "\n".join(lines)


async def answer(conn: psycopg.AsyncConnection[Any], step: Step,
                 sql: str | None = None) -> Answer:
    cur = conn.cursor(binary=step.binary)
    try:
        await cur.execute(sql or step.sql, step.params or None)
    except psycopg.Error as exc:
        diag = exc.diag
        return Answer(error=(diag.sqlstate or "", diag.message_primary or str(exc),
                             diag.message_hint))
    columns = tuple(d.name for d in cur.description or ())
    rows = tuple(await cur.fetchall()) if cur.description else ()
    return Answer(columns, rows, cur.statusmessage or "")


def _key(value: Any) -> Any:
    if isinstance(value, dict):  # jsonb: an object, compared by its items
        return ("{}", *sorted((k, _key(v)) for k, v in value.items()))
    return tuple(map(_key, value)) if isinstance(value, list | tuple) else value


def _counts(rows: tuple[tuple[Any, ...], ...]) -> collections.Counter[Any]:
    return collections.Counter(map(_key, rows))


@dataclass
class Oracle:
    """One server connection and one reference connection, and the world behind both."""

    server: psycopg.AsyncConnection[Any]
    reference: psycopg.AsyncConnection[Any]
    world: World
    report: Report = dataclasses.field(default_factory=Report)

    async def sync(self, table: str = "notes") -> None:
        """The reference's table holds the tool's rows again."""
        names = ", ".join(c for c, _ in COLUMNS[table])
        marks = ", ".join(["%s"] * len(COLUMNS[table]))
        async with self.reference.cursor() as cur:
            await cur.execute(f"DELETE FROM {table}")
            await cur.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})",
                                  self.world.records(table))

    async def run(self, case: Case) -> None:
        self.report.cases += 1
        try:
            await self._steps(case)
        finally:
            for step in case.cleanup:
                await answer(self.server, step)
                await answer(self.reference, step)

    async def _steps(self, case: Case) -> None:
        in_tx = False
        for step in case.steps:
            self.report.statements += 1
            server = await answer(self.server, step)
            reference = await answer(self.reference, step)
            verb = step.sql.split(None, 1)[0].upper()
            if verb == "BEGIN" and server.error is None:
                in_tx = True
            why = await self.judge(step, server, reference)
            if why is not None:
                self.report.disagreements.append(
                    Disagreement(case, step, why, server, reference))
            if server.error is not None and reference.error is None:
                if in_tx:  # the two transactions no longer hold the same: end both
                    await answer(self.server, Step("ROLLBACK"))
                    await answer(self.reference, Step("ROLLBACK"))
                await self.sync()
                break
            if verb in ("COMMIT", "ROLLBACK", "END"):
                in_tx = False
                await self.sync()
            elif step.write and not in_tx:
                await self.sync()

    async def judge(self, step: Step, server: Answer, reference: Answer) -> str | None:
        """Why the two answers disagree, or None when they agree."""
        if server.error is not None:
            code, _, hint = server.error
            if reference.error is not None:
                return None if code == reference.error[0] else "refused with another SQLSTATE"
            if code.startswith("XX"):
                return "an internal error where Postgres answers"
            if not hint:
                return "refused without a HINT that names the next step"
            self.report.refusals[f"{code} {server.error[1][:90]}"] += 1
            return None
        if reference.error is not None:
            return "answered where Postgres refuses"
        if server.columns != reference.columns:
            return "other columns"
        if step.write or step.sql.split(None, 1)[0].upper() in ("SET", "RESET", "BEGIN",
                                                               "COMMIT", "ROLLBACK"):
            return None if server.tag == reference.tag else "another command tag"
        if step.ordered:
            return None if list(map(_key, server.rows)) == list(map(_key, reference.rows)) \
                else "other rows, or another order"
        if step.full is not None:
            full = await answer(self.reference, step, step.full)
            if len(server.rows) != len(reference.rows):
                return "another number of rows under LIMIT"
            extra = _counts(server.rows) - _counts(full.rows)
            return None if not extra else "rows under LIMIT that the unlimited answer lacks"
        return None if _counts(server.rows) == _counts(reference.rows) else "other rows"
