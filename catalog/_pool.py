"""The pool of sidecar connections: borrowed one per statement, at most ``size`` at once.

Rules:
- ``acquire`` waits for a slot (FIFO), then takes an idle connection or opens one,
  retrying while the sidecar restarts (``connect``).
- ``take_now`` gives an idle connection at once, or none: a statement answered
  from the transports' callbacks never waits. ``give_back`` returns it.
- A connection found closed is dropped; one left broken (cancelled mid-reply,
  a stray command tag) is closed, after a cancel when its reply was cut short.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import time

from glove_scratchpad import errors
from glove_scratchpad.background import hold

from ._client import SidecarConnection
from ._sidecar import Sidecar

__all__ = ["Pool"]

log = logging.getLogger(__name__)

# A sidecar restarting (embedded: well under a second) or a network blip is waited
# for this long, with exponential backoff between tries, before a statement fails.
RECONNECT_WAIT = 15.0
RECONNECT_FIRST, RECONNECT_MAX_DELAY = 0.05, 1.0
# Errors of a connection attempt worth another try: starting up, shutting down, gone.
RETRY_STATES = frozenset(("57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"))


class _Slots:
    """A counting semaphore that can also be taken at once, without awaiting (FIFO)."""

    __slots__ = ("_free", "_waiters")

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def free(self) -> bool:
        """Whether a slot is free and nobody waits for one."""
        return self._free > 0 and not self._waiters

    def take_now(self) -> bool:
        """Take a slot if one is ``free``."""
        if self.free:
            self._free -= 1
            return True
        return False

    async def take(self) -> None:
        if self.take_now():
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot as it was cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot goes to it
                return
        self._free += 1


class Pool:
    """Sidecar connections, borrowed one per statement; at most ``size`` at once."""

    def __init__(self, sidecar: Sidecar, database: str, size: int = 16,
                 user: str | None = None) -> None:
        self.sidecar, self.database, self.size = sidecar, database, size
        self.user = user
        self._idle: list[SidecarConnection] = []
        self._slots = _Slots(size)
        self._all: set[SidecarConnection] = set()
        self.parameters: dict[str, str] = {}

    async def connect(self) -> SidecarConnection:
        """A new connection; while the sidecar cannot be reached (restarting), tried
        again with exponential backoff and jitter for up to ``RECONNECT_WAIT``."""
        deadline = time.monotonic() + RECONNECT_WAIT
        delay = RECONNECT_FIRST
        while True:
            try:
                return await SidecarConnection.connect(self.sidecar, self.database, self.user)
            except (OSError, TimeoutError, errors.SqlError) as exc:
                if isinstance(exc, errors.SqlError) and exc.sqlstate not in RETRY_STATES:
                    raise
                if time.monotonic() + delay > deadline:
                    raise errors.ConnectionFailure(
                        f"could not connect to the sidecar: {exc}"[:1000],
                        hint="The sidecar is down or restarting, and the server keeps "
                        "trying. Run the statement again in a moment.") from exc
                log.info("the sidecar cannot be reached (%s): trying again", exc)
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, RECONNECT_MAX_DELAY)

    def acquire(self) -> _Lease:
        """``async with pool.acquire() as conn``: a connection for one statement."""
        return _Lease(self)

    def take_now(self) -> SidecarConnection | None:
        """An idle, open connection at once, its slot taken; None when none is (then
        ``acquire`` waits for one). ``give_back`` returns it."""
        if not self._idle or not self._slots.take_now():
            return None
        conn = self._open_idle()
        if conn is None:
            self._slots.release()
        return conn

    def _open_idle(self) -> SidecarConnection | None:
        """An idle connection still open; those found closed (a restart) are dropped."""
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
            self._all.discard(conn)
            conn.close_now()
        return None

    def give_back(self, conn: SidecarConnection, *, cut: bool = False) -> None:
        """Return what ``take_now`` gave: to the idle ones, or closed if it is broken.
        ``cut``: its reply was cut short, and the sidecar is asked to cancel it first."""
        if conn.broken:
            self._all.discard(conn)
            if cut:
                hold(conn.cancel_and_close(), _CLOSING)
            else:
                conn.close_now()
        else:
            self._idle.append(conn)
        self._slots.release()

    async def close(self) -> None:
        for conn in list(self._all):
            await conn.close()
        self._all.clear()
        self._idle.clear()


_CLOSING: set[asyncio.Task[None]] = set()  # broken connections being cancelled and closed


class _Lease:
    """One borrowing of a pooled connection (a plain class: this runs per statement)."""

    __slots__ = ("conn", "pool")

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.conn: SidecarConnection | None = None

    async def __aenter__(self) -> SidecarConnection:
        pool = self.pool
        await pool._slots.take()
        try:
            conn = pool._open_idle()
            if conn is None:
                conn = await pool.connect()
                pool.parameters = conn.parameters
                pool._all.add(conn)
        except BaseException:
            pool._slots.release()
            raise
        self.conn = conn
        return conn

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        conn, pool = self.conn, self.pool
        assert conn is not None
        try:
            if kind is not None and issubclass(kind, asyncio.CancelledError) and conn.broken:
                await conn.cancel()  # the sidecar may still be running the statement
        finally:
            pool.give_back(conn)
