"""Connection slots: who may hold a socket of the server, and how many.

A connection holds one of two kinds of slot. From its first byte to the end of
its start-up it holds a start-up slot; once signed in, a session slot. The two
are counted apart, so connections that never sign in cannot take the slots of
those that do.

Rules:
- Start-up slots are limited per client address (``max_startup_per_address``; a
  Unix socket's clients are one address): a connection past it is refused at once
  (53300), before anything it sends is read. They are limited in total too
  (``max_startup_connections``): there, the oldest connection still starting up is
  ended (53300) to make room, so that connections from many addresses that never
  sign in cannot keep out one that does; it would have to be outpaced. The
  start-up itself is bounded by ``startup_timeout``.
- Session slots: ``max_connections`` signed-in sessions at once, the last
  ``reserved_connections`` of them for admins (``[users.NAME] admin = true``),
  as Postgres keeps ``superuser_reserved_connections``. A sign-in past them is
  refused (53300) after authentication, as in Postgres.
- A connection gives back the slot it holds when it moves on or ends, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from glove_scratchpad import errors

__all__ = ["LOCAL", "Slots", "Starting", "address_of"]

LOCAL = "[local]"  # the address of every Unix-socket client, as Postgres logs it


def address_of(peer: Any) -> str:
    """The client address a peername names (a Unix socket's is ``LOCAL``)."""
    return str(peer[0]) if isinstance(peer, tuple) and peer else LOCAL


class Starting(Protocol):
    """A connection in its start-up, as the slots see it."""

    def evict(self, err: errors.SqlError) -> None:
        """End the connection with ``err``: its slot is wanted."""
        ...


@dataclass
class Slots:
    """The start-up and session slots held, and their limits."""

    max_startup: int
    max_startup_per_address: int
    max_sessions: int
    reserved: int  # of ``max_sessions``: for admins
    by_address: dict[str, int] = field(default_factory=dict)  # start-up slots held
    starting: dict[Starting, str] = field(default_factory=dict)  # oldest first: its address
    sessions: int = 0

    def start(self, conn: Starting, address: str) -> errors.SqlError | None:
        """Take a start-up slot for a new connection from ``address``; the refusal when
        that address holds all its own (then none was taken). When all are held, the
        oldest connection still starting up is ended to make room."""
        held = self.by_address.get(address, 0)
        if held >= self.max_startup_per_address:
            return errors.TooManyConnections(
                f"too many connections starting up from {address}",
                hint=f"At most {self.max_startup_per_address} connections from one address "
                "may be signing in at once: finish the start-up of those open, or close them.")
        if len(self.starting) >= self.max_startup:
            oldest = next(iter(self.starting))
            self.started(oldest)
            oldest.evict(errors.TooManyConnections(
                "too many connections starting up: the oldest is closed",
                hint="Connect again, and finish the start-up within the server's "
                "startup_timeout."))
        self.by_address[address] = held + 1
        self.starting[conn] = address
        return None

    def started(self, conn: Starting) -> None:
        """Give back a connection's start-up slot, if it still holds it."""
        address = self.starting.pop(conn, None)
        if address is None:
            return
        held = self.by_address[address] - 1
        if held > 0:
            self.by_address[address] = held
        else:
            del self.by_address[address]

    def sign_in(self, admin: bool) -> errors.SqlError | None:
        """Take a session slot for a connection that signed in; the refusal when none is
        free to it (then none was taken)."""
        if self.sessions >= self.max_sessions:
            return errors.TooManyConnections("sorry, too many clients already",
                                             hint="Connect again when a session has ended.")
        if not admin and self.sessions >= self.max_sessions - self.reserved:
            return errors.TooManyConnections(
                "remaining connection slots are reserved for admins",
                hint="Connect again when a session has ended, or sign in as an admin.")
        self.sessions += 1
        return None

    def sign_out(self) -> None:
        """Give back a session slot."""
        self.sessions -= 1
