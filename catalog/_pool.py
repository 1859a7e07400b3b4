"""The pool of sidecar connections: borrowed one per statement, at most ``size`` at once,
shared fairly among their owners (the users whose statements they run).

Rules:
- ``acquire`` waits for a slot its owner's share allows (``_Slots``: an owner's
  statements beyond it queue on its own account, and other owners' still get one),
  then takes an idle connection or opens one, retrying while the sidecar restarts
  (``connect``).
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
from collections.abc import Hashable

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
RETRY_STATES = frozenset(e.sqlstate for e in (
    errors.AdminShutdown, errors.CrashShutdown, errors.CannotConnectNow, errors.ConnectionException,
    errors.SqlclientUnableToEstablishSqlconnection, errors.ConnectionDoesNotExist,
    errors.ConnectionFailure))


class _Slots:
    """The pool's slots, shared fairly among their owners (users), each owner's waiters
    first come first served. A slot can also be taken at once, without
    awaiting (``take_now``). The owner None (the server's own statements) is never held
    back by a share.

    The rules (the why is in docs/operations.md, "The sidecar pool"):
    - An owner holding fewer than ``share`` slots takes any free one.
    - An owner holding ``share`` or more takes one only while ``reserve`` others stay
      free: other owners find one at once, however many statements it sends.
    - A slot given back goes to a waiting owner that may take it, the one holding the
      fewest first (the oldest waiter first among equals); an owner's further waiters
      queue on its own account.
    - Whenever a slot is free, no waiter may take it: ``take_now`` needs no look at
      the waiters.
    """

    __slots__ = ("_free", "_held", "_waiters", "reserve", "share")

    def __init__(self, size: int, share: int | None = None, reserve: int = 0) -> None:
        self._free = size
        self.share = size if share is None else max(1, min(share, size))
        self.reserve = reserve
        self._held: dict[Hashable, int] = {}  # slots held, by owner (None's are not counted)
        # Owners waiting, in the order they began to wait, each with its waiters.
        self._waiters: dict[Hashable, collections.deque[asyncio.Future[None]]] = {}

    def take_now(self, owner: Hashable) -> bool:
        """Take a slot for ``owner`` if one is free and its share allows it."""
        free = self._free
        if free <= 0:
            return False
        if owner is not None:
            held = self._held.get(owner, 0)
            if held >= self.share and free <= self.reserve:
                return False
            self._held[owner] = held + 1
        self._free = free - 1
        return True

    async def take(self, owner: Hashable) -> None:
        if self.take_now(owner):
            return
        waiter = asyncio.get_running_loop().create_future()
        queue = self._waiters.get(owner)
        if queue is None:
            queue = self._waiters[owner] = collections.deque()
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(owner)  # handed a slot as it was cancelled: pass it on
            else:
                self._unqueue(owner, waiter)
            raise

    def release(self, owner: Hashable) -> None:
        self._free += 1
        if owner is not None:
            held = self._held[owner] - 1
            if held:
                self._held[owner] = held
            else:
                del self._held[owner]
        if self._waiters:
            self._hand_over()

    def _unqueue(self, owner: Hashable, waiter: asyncio.Future[None]) -> None:
        queue = self._waiters.get(owner)
        if queue is not None and waiter in queue:  # else ``_hand_over`` dropped it
            queue.remove(waiter)
            if not queue:
                del self._waiters[owner]

    def _hand_over(self) -> None:
        """Free slots to the waiters that may take them, the owner holding fewest first."""
        while self._free > 0:
            chosen: Hashable = _NOBODY
            fewest = 0
            for owner in self._waiters:
                if owner is None:
                    chosen = None
                    break
                held = self._held.get(owner, 0)
                if (held < self.share or self._free > self.reserve) and (
                        chosen is _NOBODY or held < fewest):
                    chosen, fewest = owner, held
            if chosen is _NOBODY:
                return
            queue = self._waiters[chosen]
            waiter = queue.popleft()
            if not queue:
                del self._waiters[chosen]
            if waiter.done():  # cancelled, not yet unqueued
                continue
            taken = self.take_now(chosen)
            assert taken
            waiter.set_result(None)  # the slot is its own


_NOBODY: Hashable = object()  # no owner chosen (None is one: the server's own)


class Pool:
    """Sidecar connections, borrowed one per statement; at most ``size`` at once. An
    owner holding its ``share`` of them (a fraction of ``size``, at least one) leaves
    ``reserve`` free for the others (``_Slots``)."""

    def __init__(self, sidecar: Sidecar, database: str, size: int = 16,
                 user: str | None = None, *, share: float = 1.0, reserve: int = 0) -> None:
        self.sidecar, self.database, self.size = sidecar, database, size
        self.user = user
        self._idle: list[SidecarConnection] = []
        self._slots = _Slots(size, int(size * share), reserve)
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

    def acquire(self, owner: Hashable = None) -> _Lease:
        """``async with pool.acquire(owner) as conn``: a connection for one statement of
        ``owner`` (None: the server's own, held back by no share)."""
        return _Lease(self, owner)

    def take_now(self, owner: Hashable = None) -> SidecarConnection | None:
        """An idle, open connection at once, its slot taken for ``owner``; None when none
        is, or its share allows none now (then ``acquire`` waits for one). ``give_back``
        returns it, for the same owner."""
        if not self._idle or not self._slots.take_now(owner):
            return None
        conn = self._open_idle()
        if conn is None:
            self._slots.release(owner)
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

    def give_back(self, conn: SidecarConnection, owner: Hashable = None, *,
                  cut: bool = False) -> None:
        """Return what ``take_now`` gave ``owner``: to the idle ones, or closed if it is
        broken.
        ``cut``: its reply was cut short, and the sidecar is asked to cancel it first."""
        if conn.broken:
            self._all.discard(conn)
            if cut:
                hold(conn.cancel_and_close(), _CLOSING)
            else:
                conn.close_now()
        else:
            self._idle.append(conn)
        self._slots.release(owner)

    async def close(self) -> None:
        for conn in list(self._all):
            await conn.close()
        self._all.clear()
        self._idle.clear()


_CLOSING: set[asyncio.Task[None]] = set()  # broken connections being cancelled and closed


class _Lease:
    """One borrowing of a pooled connection (a plain class: this runs per statement)."""

    __slots__ = ("conn", "owner", "pool")

    def __init__(self, pool: Pool, owner: Hashable) -> None:
        self.pool, self.owner = pool, owner
        self.conn: SidecarConnection | None = None

    async def __aenter__(self) -> SidecarConnection:
        pool = self.pool
        await pool._slots.take(self.owner)
        try:
            conn = pool._open_idle()
            if conn is None:
                conn = await pool.connect()
                pool.parameters = conn.parameters
                pool._all.add(conn)
        except BaseException:
            pool._slots.release(self.owner)
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
            pool.give_back(conn, self.owner)
