"""A session's virtual transaction: its state, staged writes and savepoints.

Rules (the transitions, as data in ``_AFTER_ERROR`` and the methods below):
- IDLE --BEGIN--> OPEN; OPEN --error--> FAILED; FAILED --ROLLBACK [TO]--> …
- COMMIT of OPEN hands the staged writes over to be fired and ends it;
  COMMIT of FAILED is a ROLLBACK, as in Postgres; ROLLBACK discards them.
- A savepoint is a mark in the staged list: ROLLBACK TO drops the writes
  staged after it and keeps the savepoint; RELEASE drops it and later ones.
- The session's settings keep the same marks (``SessionSettings``): a ROLLBACK
  undoes the SETs of the transaction, and its end drops SET LOCAL's values.
- Nothing here fires a write or touches the sidecar.
"""

from __future__ import annotations

import enum

from glove_scratchpad import errors

from .result import Notice, Result, StagedWrite
from .session_settings import SessionSettings

__all__ = ["Transaction", "TxState"]


class TxState(enum.Enum):
    """The transaction status, valued as ReadyForQuery reports it."""

    IDLE = "I"
    OPEN = "T"
    FAILED = "E"


def _discarded(n: int) -> list[Notice]:
    return [Notice(f"discarded {n} staged write{'s' if n != 1 else ''}")] if n else []


class Transaction:
    """The virtual transaction of one session."""

    def __init__(self, settings: SessionSettings | None = None) -> None:
        # The session's settings, which it marks at its boundaries (they are the session's).
        self.settings = settings if settings is not None else SessionSettings()
        self.state = TxState.IDLE
        self.read_only = False  # BEGIN READ ONLY or SET TRANSACTION READ ONLY
        self.isolation: str | None = None  # BEGIN ISOLATION LEVEL …, for SHOW only
        self.staged: list[StagedWrite] = []
        self.savepoints: list[tuple[str, int]] = []  # (name, writes staged before it)

    def fail(self) -> None:
        """An error aborts an open transaction."""
        if self.state is TxState.OPEN:
            self.state = TxState.FAILED

    def check_not_failed(self) -> None:
        if self.state is TxState.FAILED:
            raise errors.InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block",
                hint="ROLLBACK to end it; nothing it staged will fire.",
            )

    def begin(self, read_only: bool, isolation: str | None = None) -> Result:
        if self.state is not TxState.IDLE:
            return Result("BEGIN", notices=[Notice(
                "there is already a transaction in progress", "WARNING",
                errors.ActiveSqlTransaction.sqlstate)])
        self.state, self.read_only, self.isolation = TxState.OPEN, read_only, isolation
        self.settings.begin()
        return Result("BEGIN")

    def rollback(self) -> Result:
        if self.state is TxState.IDLE:
            return Result("ROLLBACK", notices=[Notice(
                "there is no transaction in progress", "WARNING",
                errors.NoActiveSqlTransaction.sqlstate)])
        discarded = len(self.staged)
        self._end(committed=False)
        return Result("ROLLBACK", notices=_discarded(discarded))

    def take_for_commit(self) -> list[StagedWrite] | Result:
        """The writes COMMIT must fire, in order, the transaction ended; or COMMIT's
        whole answer when there is nothing to fire (no transaction, or a failed one)."""
        if self.state is TxState.IDLE:
            return Result("COMMIT", notices=[Notice(
                "there is no transaction in progress", "WARNING",
                errors.NoActiveSqlTransaction.sqlstate)])
        if self.state is TxState.FAILED:
            self._end(committed=False)
            return Result("ROLLBACK")
        staged = self.staged
        self._end(committed=True)
        return staged

    def _end(self, *, committed: bool) -> None:
        self.settings.end(committed=committed)
        self.state = TxState.IDLE
        self.read_only = False
        self.isolation = None
        self.staged = []
        self.savepoints = []

    def savepoint(self, verb: str, name: str) -> Result:
        """SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT, as Postgres words them.

        Drivers nest transactions with savepoints (psycopg's ``conn.transaction()``
        inside a transaction, SQLAlchemy's ``begin_nested()``, asyncpg's nested
        ``transaction()``); SQLAlchemy's psycopg dialect does so on connect.
        """
        if self.state is TxState.IDLE:
            raise errors.NoActiveSqlTransaction(
                f"{verb} can only be used in transaction blocks",
                hint="BEGIN first; a savepoint marks a point among the staged writes.")
        if self.state is TxState.FAILED and verb != "ROLLBACK TO SAVEPOINT":
            raise errors.InFailedSqlTransaction(
                "current transaction is aborted, commands ignored until end of transaction block",
                hint="ROLLBACK, or ROLLBACK TO SAVEPOINT, to go on.")
        if verb == "SAVEPOINT":
            self.savepoints.append((name, len(self.staged)))
            self.settings.savepoint()
            return Result("SAVEPOINT")
        # The most recent savepoint of that name, as in Postgres (names may repeat).
        index = next((i for i in reversed(range(len(self.savepoints)))
                      if self.savepoints[i][0] == name), None)
        if index is None:
            self.fail()
            raise errors.InvalidSavepointSpecification(
                f'savepoint "{name}" does not exist',
                hint="SAVEPOINT name creates one inside the transaction.")
        if verb == "RELEASE SAVEPOINT":
            del self.savepoints[index:]  # it and every later one; the writes stay staged
            self.settings.release(index)
            return Result("RELEASE")
        mark = self.savepoints[index][1]
        discarded = len(self.staged) - mark
        del self.savepoints[index + 1:]
        del self.staged[mark:]
        self.settings.rollback_to(index)
        self.state = TxState.OPEN
        return Result("ROLLBACK", notices=_discarded(discarded))
