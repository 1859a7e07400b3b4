"""The phases of one client connection, as data: an enum and the moves between them.

``ClientHandler`` (``connection``) is in one phase at a time, and moves only along
``MOVES``; ``wire/states.py`` does the same for the protocol's messages. The phase
says who holds the connection (its task, or the transport's callbacks) and what a
cancel, a client gone or new bytes do to it.

Rules:
- STARTING: from the first byte to the first ReadyForQuery (``startup``); then READING.
- READING: the task reads and answers messages; nothing runs. Bytes wake it.
- PARKED: the task waits for a request's first bytes. A portal run that arrives whole
  may be answered in the transport's callbacks (ANSWERING); other bytes wake the task,
  which reads them (READING).
- ANSWERING: a portal run answered in callbacks (``callbacks``), started there or by
  the task (from READING, when the run was read already); the task stays parked. A
  cancel stops the run with 57014; the client gone stops it silently. Its end,
  whichever, is PARKED again.
- RUNNING: a statement runs in the task. A cancel stops it (CANCELING), unless the
  session says a COMMIT runs (``Session.committing``): as in Postgres, COMMIT is not
  canceled half-way. The client gone cancels the task.
- CANCELING: a cancel of the running statement was asked; a second one does nothing.
  The statement's end, either way, is READING.
- CLOSED: the connection ended, from any phase; nothing leaves it.
- A move not in ``MOVES`` is our bug: ``ImpossibleMove`` at once, answered as any
  internal error is (``internal``), never a phase left half changed.
"""

from __future__ import annotations

import enum

__all__ = ["MOVES", "ImpossibleMove", "Phase", "check"]


class Phase(enum.Enum):
    STARTING = "STARTING"
    READING = "READING"
    PARKED = "PARKED"
    ANSWERING = "ANSWERING"
    RUNNING = "RUNNING"
    CANCELING = "CANCELING"
    CLOSED = "CLOSED"


P = Phase

# The phases each phase may move to. CLOSED is reachable from every other.
MOVES: dict[Phase, frozenset[Phase]] = {
    P.STARTING: frozenset((P.READING, P.CLOSED)),
    P.READING: frozenset((P.PARKED, P.ANSWERING, P.RUNNING, P.CLOSED)),
    P.PARKED: frozenset((P.READING, P.ANSWERING, P.CLOSED)),
    P.ANSWERING: frozenset((P.PARKED, P.CLOSED)),
    P.RUNNING: frozenset((P.CANCELING, P.READING, P.CLOSED)),
    P.CANCELING: frozenset((P.READING, P.CLOSED)),
    P.CLOSED: frozenset(),
}

# A statement runs in the task: a cancel may stop it, and a shutdown waits for it.
RUNS = frozenset((P.RUNNING, P.CANCELING))


class ImpossibleMove(RuntimeError):
    """A move the table does not allow: a bug of the connection's, never the client's."""


def check(now: Phase, to: Phase) -> Phase:
    """``to``, if ``now`` may move there; else ``ImpossibleMove``."""
    if to not in MOVES[now]:
        raise ImpossibleMove(f"a connection cannot move from {now.name} to {to.name}")
    return to
