"""Who is signed in to the console: each browser session is one wire connection to the
server, opened with the role and password the person gave.

Rules:
- Signing in is connecting: the server checks the password (SCRAM) as it does for any
  client, and a wrong role or password fails the same way (no hint of which).
- The password is used once, to connect, and never kept, logged or shown.
- A browser holds a random token in a cookie; the server-side session holds the
  connection, the CSRF token of its forms, and the one message to show next.
- One statement at a time runs on a session's connection (its lock): two tabs of
  one browser queue, they never interleave on the wire.
- A session idle for ``IDLE_S`` is signed out; past ``MAX_SIGNED_IN`` sessions, the
  least recently used is. A connection the server closed signs its session out.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import ssl
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import asyncpg

__all__ = ["ConsoleSession", "SignInFailed", "Signins", "Target"]

IDLE_S = 30 * 60.0  # seconds a console session lives without a request
MAX_SIGNED_IN = 32  # console sessions at once: each holds a connection to the server
CONNECT_TIMEOUT = 10.0  # seconds to sign in (the server's SCRAM is deliberately slow)
SIGN_INS_AT_ONCE = 2  # password checks in flight: a flood of guesses waits its turn


class SignInFailed(Exception):
    """The role and password did not open a session (the message is for the page)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where the console's connections go: the server it is served by."""

    host: str
    port: int
    database: str
    tls: bool  # the server requires (or offers) TLS: connect with it


@dataclass(eq=False)
class ConsoleSession:
    """One signed-in browser session."""

    token: str
    user: str
    conn: Any  # asyncpg.Connection
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seen: float = field(default_factory=time.monotonic)
    flash: list[tuple[str, str]] = field(default_factory=list)  # (kind, text), shown once

    def say(self, kind: str, text: str) -> None:
        self.flash.append((kind, text))

    def take_flash(self) -> list[tuple[str, str]]:
        shown, self.flash = self.flash, []
        return shown


class Signins:
    """The console's signed-in sessions, by cookie token."""

    def __init__(self, target: Target) -> None:
        self._target = target
        self._sessions: OrderedDict[str, ConsoleSession] = OrderedDict()
        self._gate = asyncio.Semaphore(SIGN_INS_AT_ONCE)

    def _tls(self) -> ssl.SSLContext | bool:
        if not self._target.tls:
            return False
        # The console connects to its own server over loopback: encrypted as the server
        # demands, with no name to verify.
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    async def sign_in(self, user: str, password: str) -> ConsoleSession:
        t = self._target
        async with self._gate:
            try:
                conn = await asyncpg.connect(host=t.host, port=t.port, user=user,
                                             password=password, database=t.database,
                                             ssl=self._tls(), timeout=CONNECT_TIMEOUT,
                                             statement_cache_size=0)
            except (asyncpg.InvalidPasswordError,
                    asyncpg.InvalidAuthorizationSpecificationError):
                raise SignInFailed("The role or the password is wrong.") from None
            except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
                raise SignInFailed(f"The server did not open a session "
                                   f"({type(exc).__name__}); try again.") from None
        session = ConsoleSession(secrets.token_urlsafe(32), user, conn)
        self._sessions[session.token] = session
        while len(self._sessions) > MAX_SIGNED_IN:
            _, oldest = self._sessions.popitem(last=False)
            await _close(oldest)
        return session

    async def find(self, token: str | None) -> ConsoleSession | None:
        """The live session of a cookie's token, or None (signed out, expired, closed)."""
        await self._expire()
        session = self._sessions.get(token or "")
        if session is None:
            return None
        if session.conn.is_closed():
            await self.sign_out(session)
            return None
        session.seen = time.monotonic()
        self._sessions.move_to_end(session.token)
        return session

    async def sign_out(self, session: ConsoleSession) -> None:
        self._sessions.pop(session.token, None)
        await _close(session)

    async def _expire(self) -> None:
        now = time.monotonic()
        for token, session in list(self._sessions.items()):
            if now - session.seen > IDLE_S and not session.lock.locked():
                del self._sessions[token]
                await _close(session)

    async def close(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            await _close(session)


async def _close(session: ConsoleSession) -> None:
    with contextlib.suppress(Exception):  # a connection already gone is closed
        await asyncio.wait_for(session.conn.close(), 2)
