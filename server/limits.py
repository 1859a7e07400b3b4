"""Bounds on the work one statement may cause, and the audit of every tool call.

Rules:
- Every resolver call goes through ``Guard.call``: at most ``resource_concurrency``
  calls of one resource run at once, each within ``resolver_timeout`` seconds,
  and each is recorded in the audit, whatever its outcome.
- The number of calls a statement will make is checked against ``call_budget``
  before any is made, with the estimate in the error.
- Results are cut at ``row_limit`` rows (with a NOTICE) and refused beyond
  ``max_result_bytes``.
- The audit lands in the sidecar (``_gs_audit.calls``), written in the
  background so no statement waits for it; ``scratchpad.calls`` reads it back:
  a session its own calls, an administrator every session's.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import inspect
import json
import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from glove_scratchpad import errors

__all__ = ["AUDIT_COLUMNS", "Audit", "Guard", "Limits"]

log = logging.getLogger(__name__)

AUDIT_COLUMNS = [
    ("at", "timestamp with time zone"), ("user_name", "text"), ("session", "bigint"),
    ("statement", "text"), ("resource", "text"), ("verb", "text"), ("arguments", "jsonb"),
    ("status", "text"), ("latency_ms", "double precision"), ("rows", "bigint"),
    ("error", "text"),
]
AUDIT_TABLE = '"_gs_audit"."calls"'
AUDIT_DELAY = 0.25  # seconds a call's record may wait to be written with others
AUDIT_BATCH = 1000  # records that are written at once without waiting


@dataclass(frozen=True, slots=True)
class Limits:
    """Server-wide bounds; a role's policy may lower the row limit and timeout."""

    row_limit: int | None = None
    max_result_bytes: int = 256 * 1024 * 1024  # what one result may relay
    call_budget: int = 1000  # resolver calls one statement may make
    resolver_timeout: float = 60.0  # seconds per resolver call
    resource_concurrency: int = 10  # calls of one resource running at once
    statement_timeout: float = 300.0  # seconds; a client's SET can only lower it


class Audit:
    """Tool calls, recorded in the sidecar in the background."""

    def __init__(self, pool: asyncpg.Pool | None) -> None:
        self._pool = pool
        self._pending: list[tuple[Any, ...]] = []
        self._flushing: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    @staticmethod
    def ddl() -> list[str]:
        cols = ", ".join(f'"{n}" {t}' for n, t in AUDIT_COLUMNS)
        return ['CREATE SCHEMA IF NOT EXISTS "_gs_audit"',
                f"CREATE TABLE IF NOT EXISTS {AUDIT_TABLE} ({cols})"]

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
                "calls", schema_name="_gs_audit", records=[_audit_row(r) for r in batch],
                columns=[n for n, _ in AUDIT_COLUMNS])
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError):
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

    async def read(self, session: int | None) -> list[dict[str, Any]]:
        """The calls of one session (None: of every session), oldest first."""
        if self._pool is None:
            return []
        await self.flush()
        where = "" if session is None else " WHERE session = $1"
        args = [] if session is None else [session]
        rows = await self._pool.fetch(f"SELECT * FROM {AUDIT_TABLE}{where} ORDER BY at", *args)
        return [{**r, "arguments": json.loads(r["arguments"])} for r in rows]

    async def close(self) -> None:
        await self.flush()
        self._pool = None  # later records (a closing connection's) are dropped


class Guard:
    """Concurrency, timeout and audit around every resolver call."""

    def __init__(self, limits: Limits, audit: Audit) -> None:
        self.limits = limits
        self.audit = audit
        self._slots: dict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(limits.resource_concurrency))

    async def call(self, resource: str, verb: str, fn: Callable[[], Any], *,
                   arguments: Any, user: str, session: int, statement: str) -> Any:
        """``fn()``, and its result awaited if it is awaitable.

        The concurrency slot and the timeout apply to the awaiting: a plain
        function runs to its end without yielding, so neither could act on it.
        """
        started = time.monotonic()
        status, error, rows = "ok", None, None
        try:
            out = fn()
            if inspect.isawaitable(out):
                async with self._slots[resource]:
                    async with asyncio.timeout(self.limits.resolver_timeout):
                        out = await out
            if isinstance(out, list | tuple):
                rows = len(out)
            return out
        except TimeoutError:
            status, error = "timeout", f"timed out after {self.limits.resolver_timeout:g} s"
            raise errors.ExternalRoutineError(
                f'resource "{resource}" {verb} {error}',
                hint="The tool did not answer in time; try again, or narrow the call's "
                "arguments.") from None
        except asyncio.CancelledError:
            status, error = "canceled", "canceled"
            raise
        except Exception as exc:
            status, error = "error", f"{type(exc).__name__}: {exc}"[:1000]
            raise
        finally:
            # Raw values: the batch write turns them into timestamps and JSON.
            self.audit.record((
                time.time(), user, session, statement, resource, verb, arguments, status,
                (time.monotonic() - started) * 1000, rows, error,
            ))

    def check_budget(self, estimate: int) -> None:
        if estimate > self.limits.call_budget:
            raise errors.ProgramLimitExceeded(
                f"this statement would make {estimate} resolver calls; the budget is "
                f"{self.limits.call_budget} per statement",
                hint="Narrow the IN lists or subqueries that fan out, or split the work "
                "into several statements.")


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
