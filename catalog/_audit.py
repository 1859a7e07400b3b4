"""The audit of tool calls: every resolver call, recorded in the sidecar.

Rules:
- Records are written in the background, in batches (one COPY per
  ``AUDIT_DELAY`` or per ``AUDIT_BATCH`` records), so no statement waits for it.
- ``read`` flushes first: a session reads back its own calls at once.
- A user reads their own calls (an administrator: everyone's); session ids are
  unique across processes, so one user's calls never carry another's session.
- A batch waits for a sidecar that restarts (the one access layer,
  ``_access.Access``); one that fails even so is logged and dropped: it never
  fails a statement.
- ``prune`` forgets calls older than the server's ``retention_days`` (if set).
- The table is in the server's private schema (``Schemas.private``): servers of
  other names on the same database keep audits of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import math
from typing import Any

import asyncpg

from glove_scratchpad import errors
from glove_scratchpad.names import quote_ident

from ._access import Access
from ._journal import PRIVATE_SCHEMA

__all__ = ["AUDIT_COLUMNS", "Audit"]

log = logging.getLogger(__name__)

AUDIT_COLUMNS = [
    ("at", "timestamp with time zone"), ("user_name", "text"), ("session", "bigint"),
    ("statement", "text"), ("resource", "text"), ("verb", "text"), ("arguments", "jsonb"),
    ("status", "text"), ("latency_ms", "double precision"), ("rows", "bigint"),
    ("error", "text"),
]
AUDIT_DELAY = 0.25  # seconds a call's record may wait to be written with others
AUDIT_BATCH = 1000  # records that are written at once without waiting


class Audit:
    """Tool calls, recorded in the sidecar in the background."""

    def __init__(self, pool: asyncpg.Pool | None, schema: str = PRIVATE_SCHEMA) -> None:
        self._pool = None if pool is None else Access(pool, "audit")
        self.schema = schema
        self.table = _table(schema)
        self._pending: list[tuple[Any, ...]] = []
        self._flushing: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    @staticmethod
    def ddl(schema: str = PRIVATE_SCHEMA) -> list[str]:
        cols = ", ".join(f'"{n}" {t}' for n, t in AUDIT_COLUMNS)
        table = _table(schema)
        return [f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}",
                f"CREATE TABLE IF NOT EXISTS {table} ({cols})",
                f"CREATE INDEX IF NOT EXISTS calls_user ON {table} (user_name, at)"]

    def record(self, row: tuple[Any, ...]) -> None:
        self._pending.append(row)
        if self._pool is None:
            return
        if len(self._pending) >= AUDIT_BATCH:
            self._kick()
        elif self._timer is None:  # written in batches, off every statement's path
            self._timer = asyncio.get_running_loop().call_later(AUDIT_DELAY, self._kick)

    def _kick(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.ensure_future(self._write_batch())
        # else: the batch being written schedules the next one when it is done

    async def _write_batch(self) -> None:
        """One COPY of what is pending. Records that arrive meanwhile wait for the next
        batch: a loop here would chase a busy server with one COPY per record."""
        try:
            await self._write(self._take())
        finally:
            if len(self._pending) >= AUDIT_BATCH:
                self._flushing = asyncio.ensure_future(self._write_batch())
            elif self._pending and self._timer is None and self._pool is not None:
                self._timer = asyncio.get_running_loop().call_later(AUDIT_DELAY, self._kick)

    def _take(self) -> list[tuple[Any, ...]]:
        batch, self._pending = self._pending, []
        return batch

    async def _write(self, batch: list[tuple[Any, ...]]) -> None:
        if not batch or self._pool is None:
            return
        try:
            await self._pool.copy_records_to_table(
                "calls", schema_name=self.schema, records=[_audit_row(r) for r in batch],
                columns=[n for n, _ in AUDIT_COLUMNS])
        except errors.SqlError:
            log.warning("could not write %d audit records", len(batch), exc_info=True)

    async def flush(self) -> None:
        """Write every pending record now (after the batch being written, if any)."""
        if self._flushing is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._flushing)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self._write(self._take())

    async def read(self, user: str | None) -> list[dict[str, Any]]:
        """The calls of one user (None: of every user), oldest first."""
        if self._pool is None:
            return []
        await self.flush()
        where = "" if user is None else " WHERE user_name = $1"
        args = [] if user is None else [user]
        rows = await self._pool.fetch(f"SELECT * FROM {self.table}{where} ORDER BY at", *args)
        return [{**r, "arguments": json.loads(r["arguments"])} for r in rows]

    async def prune(self, days: float) -> int:
        """Forget the calls made more than ``days`` ago; how many went."""
        if self._pool is None:
            return 0
        done = await self._pool.execute(
            f"DELETE FROM {self.table} WHERE at < now() - make_interval(secs => $1)",
            days * 86400)
        return int(done.split()[-1])

    async def close(self) -> None:
        await self.flush()
        self._pool = None  # later records (a closing connection's) are dropped


def _table(schema: str) -> str:
    return f"{quote_ident(schema)}.calls"


def _audit_row(record: tuple[Any, ...]) -> tuple[Any, ...]:
    """A call as recorded on the hot path, as the audit table's columns take it."""
    at, user, session, statement, resource, verb, arguments, *rest = record
    return (dt.datetime.fromtimestamp(at, dt.UTC), user, session, statement[:4000], resource,
            verb, json.dumps(_finite(arguments), default=str), *rest)


def _finite(value: Any) -> Any:
    """Arguments as jsonb takes them: JSON has no NaN or Infinity, and one such value
    would fail the whole batch of audit records it is copied with."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
