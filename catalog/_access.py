"""One way to the sidecar: its errors told as ``errors.*``, and one reconnect policy.

Every exchange the server has with the sidecar goes through here, whichever client
makes it: the project's own (``_client.py``, pooled by ``_pool.py``: the clients'
statements) or asyncpg (``Access``: the journal, the audit, the approvals; the kept
calls' store, and the catalog's administration, which keep asyncpg for COPY and DDL).

Rules:
- An error is an ``errors.SqlError`` once it leaves this layer: the sidecar's own
  (asyncpg's ``PostgresError`` rebuilt with its SQLSTATE, message, DETAIL and HINT),
  or, for a sidecar that cannot be reached (``unreachable``: refused, gone, starting
  or shutting down), 08006 with a HINT to try again in a moment (``lost``).
- One reconnect policy (``reconnecting``): an exchange that finds the sidecar
  unreachable is tried again, on a new connection, with exponential backoff and
  jitter, for up to ``RECONNECT_WAIT`` seconds (a restart of the embedded sidecar
  takes well under one); then it fails with 08006. A new connection of the pool, an
  exchange of the journal, the audit or the approvals, and the kept calls' store
  opened again all wait so. Each of those exchanges is safe to send twice (the
  journal's are keyed, its changes idempotent).
- A statement whose connection goes while it runs gets the backend's own 57P01, or
  08006, with the same HINT (``lost``): nothing it did in the sidecar outlives it,
  so running it again is always safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import asyncpg

from glove_scratchpad import errors

from ._trips import counted

__all__ = ["RECONNECT_WAIT", "RETRY_HINT", "Access", "lost", "reconnecting", "translate",
           "unreachable"]

log = logging.getLogger(__name__)
T = TypeVar("T")

# A sidecar restarting (embedded: well under a second) or a network blip is waited
# for this long, with exponential backoff between tries, before an exchange fails.
RECONNECT_WAIT = 15.0
RECONNECT_FIRST, RECONNECT_MAX_DELAY = 0.05, 1.0
# The sidecar's answers that mean it is starting, shutting down or gone.
RETRY_STATES = frozenset(e.sqlstate for e in (
    errors.AdminShutdown, errors.CrashShutdown, errors.CannotConnectNow, errors.ConnectionException,
    errors.SqlclientUnableToEstablishSqlconnection, errors.ConnectionDoesNotExist,
    errors.ConnectionFailure))
RETRY_HINT = ("The connection to the sidecar was lost (it is being restarted); nothing ran. "
              "Run the statement again in a moment.")
DOWN_HINT = ("The sidecar is down or restarting, and the server keeps trying. Run the "
             "statement again in a moment.")


def unreachable(exc: BaseException) -> bool:
    """Whether an error means the sidecar could not be reached, or the connection went
    (worth waiting for), whichever client raised it."""
    if isinstance(exc, errors.SqlError | asyncpg.PostgresError):
        return getattr(exc, "sqlstate", None) in RETRY_STATES
    # asyncpg's InterfaceError is also a connection closed under it; its DataError (a
    # value a column's codec refused) is not.
    return isinstance(exc, OSError | TimeoutError | asyncpg.InterfaceError
                      | asyncpg.InternalClientError) and not isinstance(exc, ValueError)


def lost(received: errors.SqlError | None = None) -> errors.SqlError:
    """The error a statement gets when its sidecar connection ends under it: the
    backend's own (57P01 …), if it said why, else 08006; as an ERROR, with a HINT."""
    if received is not None and errors.sqlstate_class(received.sqlstate) in (
            errors.CLASS_OPERATOR_INTERVENTION, errors.CLASS_CONNECTION_EXCEPTION):
        return received.replaced(severity="ERROR", hint=received.hint or RETRY_HINT)
    return errors.ConnectionFailure("the connection to the sidecar was lost",
                                    hint=RETRY_HINT)


def translate(exc: BaseException) -> errors.SqlError | None:
    """A failure of an exchange with the sidecar, as the ``errors.SqlError`` it means;
    None for one that is not the sidecar's (a bug of ours: raised as it is)."""
    if isinstance(exc, errors.SqlError):
        return exc
    if isinstance(exc, asyncpg.PostgresError) and not unreachable(exc):
        code = exc.sqlstate or "XX000"
        return errors.error_class(code)(getattr(exc, "message", None) or str(exc) or code,
                                        detail=getattr(exc, "detail", None),
                                        hint=getattr(exc, "hint", None), sqlstate=code)
    if unreachable(exc):
        return errors.ConnectionFailure(f"could not reach the sidecar: {exc}"[:1000],
                                        hint=DOWN_HINT)
    if isinstance(exc, asyncpg.InterfaceError):  # the driver refused a value
        return errors.DataException(str(exc)[:1000])
    return None


async def reconnecting(exchange: Callable[[], Awaitable[T]], *,
                       wait: float = RECONNECT_WAIT,
                       closing: Callable[[], bool] | None = None) -> T:
    """``exchange()``; while the sidecar cannot be reached, tried again with exponential
    backoff and jitter for up to ``wait`` seconds (not once ``closing()`` says its
    owner is being closed). Its errors as ``errors.SqlError``."""
    deadline = time.monotonic() + wait
    delay = RECONNECT_FIRST
    while True:
        try:
            return await exchange()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not unreachable(exc) or (closing is not None and closing()):
                _raise(exc)
            if time.monotonic() + delay > deadline:
                raise errors.ConnectionFailure(
                    f"could not connect to the sidecar: {exc}"[:1000],
                    hint=DOWN_HINT) from exc
            log.info("the sidecar cannot be reached (%s): trying again", exc)
        await asyncio.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, RECONNECT_MAX_DELAY)


def _raise(exc: Exception) -> NoReturn:
    error = translate(exc)
    if error is None or error is exc:
        raise exc
    raise error from exc


async def _translated(exchange: Callable[[], Awaitable[T]]) -> T:
    """``exchange()``, its errors as ``errors.SqlError`` (not tried again)."""
    try:
        return await exchange()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        _raise(exc)


class Access:
    """An asyncpg pool or connection, as the server's own work reaches the sidecar
    through it: each exchange counted under ``purpose`` (``_trips``), its errors told
    as ``errors.SqlError``, and, on a pool, tried again while the sidecar restarts
    (``reconnecting``: the pool opens a new connection for a closed one). A lone
    connection that goes is its owner's to open again, as the same policy says."""

    __slots__ = ("_run", "_target")

    def __init__(self, target: asyncpg.Pool | asyncpg.Connection, purpose: str) -> None:
        self._target = counted(target, purpose)
        self._run: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]] = _translated
        if isinstance(target, asyncpg.Pool):  # a closed pool is not a sidecar to wait for
            self._run = functools.partial(reconnecting, closing=target.is_closing)

    async def execute(self, sql: str, *args: Any) -> str:
        return await self._run(lambda: self._target.execute(sql, *args))

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return await self._run(lambda: self._target.fetch(sql, *args))

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._run(lambda: self._target.fetchval(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self._run(lambda: self._target.fetchrow(sql, *args))

    async def copy_records_to_table(self, table: str, **kwargs: Any) -> str:
        return await self._run(lambda: self._target.copy_records_to_table(table, **kwargs))

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """A transaction block (a savepoint inside one), its BEGIN and end translated too."""
        try:
            async with self._target.transaction():
                yield
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _raise(exc)
