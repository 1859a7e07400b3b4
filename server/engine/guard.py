"""Bounds on the work one statement may cause, around every resolver call.

Rules:
- Every resolver call goes through ``Guard.call``: at most ``resource_concurrency``
  calls of one resource run at once, each within ``resolver_timeout`` seconds,
  and each is recorded in the audit, whatever its outcome.
- The number of calls a statement will make is checked against ``call_budget``
  before any is made, with the estimate in the error.
- Results are cut at ``row_limit`` rows (with a NOTICE) and refused beyond
  ``max_result_bytes``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.catalog import Audit

__all__ = ["Guard", "Limits"]

@dataclass(frozen=True, slots=True)
class Limits:
    """Server-wide bounds; a role's policy may lower the row limit and timeout."""

    row_limit: int | None = None
    max_result_bytes: int = 256 * 1024 * 1024  # what one result may relay
    call_budget: int = 1000  # resolver calls one statement may make
    resolver_timeout: float = 60.0  # seconds per resolver call
    resource_concurrency: int = 10  # calls of one resource running at once
    statement_timeout: float = 300.0  # seconds; a client's SET can only lower it


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
