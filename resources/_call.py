"""What a resolver may receive and raise besides its arguments.

Rules:
- A resolver that declares a parameter named ``ctx`` is passed a ``CallContext``
  (by keyword): who called, from which statement, by when it must answer, and
  for a write, the idempotency key its retries reuse; for a read, how many rows
  the server will pull at most.
- A resolver raises ``TransientError`` for a failure worth trying again (a 429,
  a 503, a dropped connection). A read of a resource declared with ``retries``
  is then made again, after a backoff; a write never is by itself.
- A plain (non-async) resolver runs in a worker thread unless its resource is
  ``inline``; an async one (or an object whose ``__call__`` is async) runs on
  the event loop.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CallContext", "TransientError", "is_async", "takes_context"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """The context of one resolver call, passed as ``ctx`` to a resolver that asks for it."""

    user: str  # the user the client connected as ("" in process)
    session: int  # the session's id, unique across processes and restarts
    statement: str  # the text of the statement that made (or staged) the call
    deadline: float | None = None  # time.monotonic() by which the call must answer
    idempotency_key: str | None = None  # writes: one per staged write, the same on retries
    # Records what the call did on the way in the audit (scratchpad.calls), under the
    # same user, session and statement: report(what, arguments, status, ms, rows, error);
    # an HTTP API's resolver reports each request so. None: nothing records it.
    report: Callable[..., None] | None = None
    # A read: the most rows the server pulls from the answer (a pushed LIMIT, else the
    # per-call row cap and one more, to tell it was reached). A paged resolver may ask
    # for its next page ahead while rows of this one are still pulled, when that page
    # is sure to be wanted. None: not said.
    rows_wanted: int | None = None
    # A read: counts one request to an upstream (an HTTP API's page, retry) against
    # the statement's call budget; the call's first is the call itself. Raises 54000
    # past the budget. None: nothing counts them (a write's are known when staged).
    charge: Callable[[], None] | None = None
    # Tells the client a WARNING: warn(message, hint=None). A write whose tool acted,
    # and whose answer it could not read as it expected, says so here, not by failing.
    # None: nothing shows it.
    warn: Callable[..., None] | None = None
    # Tells the client a NOTICE: notice(message, hint=None). A read whose answer says
    # there is more than it read (a page it could not follow) says so here.
    # None: nothing shows it.
    notice: Callable[..., None] | None = None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())


class TransientError(Exception):
    """A failure worth retrying: raise it from a resolver to ask for a retry.

    ``retry_after`` is how long the service asked to wait (HTTP ``Retry-After``),
    in seconds; the backoff waits at least that long.
    """

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def takes_context(fn: Any) -> bool:
    """Whether a resolver declares a parameter named ``ctx``."""
    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def is_async(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine (an async function, or an object whose
    ``__call__`` is one), so it runs on the event loop rather than in a thread."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))  # noqa: B004 - the method, not callability
