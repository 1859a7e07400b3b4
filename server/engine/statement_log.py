"""Statements' ends as events of the log (``server/logs.py`` turns them on in JSON mode).

Rules:
- An end is logged at INFO when the statements' logger is on, and as a WARNING
  when it took ``slow_statement_s`` or longer, whichever the logger's level.
- The statement's text is in the event only under DEBUG (``-v``).
"""

from __future__ import annotations

import logging

from .statement import Statement

__all__ = ["ENDS", "log_end", "logs_ends"]

ENDS = logging.getLogger("glove_scratchpad.statements")


def logs_ends() -> bool:
    """Whether every statement's end is an event (not only a slow one's)."""
    return ENDS.isEnabledFor(logging.INFO)


def log_end(number: str, user: str, session_id: int, sql: str, kind: str,
            st: Statement | None, outcome: str, elapsed: float, slow: float | None) -> None:
    """A statement's end as an event of the log: ``number`` is its id (session:count)."""
    event = {"event": "statement", "statement": number, "session": session_id, "user": user,
             "kind": kind, "duration_ms": round(elapsed * 1000, 3),
             "calls": st.calls if st is not None else 0, "outcome": outcome}
    if ENDS.isEnabledFor(logging.DEBUG):
        event["sql"] = sql
    if slow is not None and elapsed >= slow:
        ENDS.warning("slow statement: %s took %.0f ms (slow_statement_s is %g)",
                     kind, elapsed * 1000, slow,
                     extra={"event": event | {"event": "slow_statement"}})
    else:
        ENDS.info("%s %s in %.1f ms", kind, outcome, elapsed * 1000, extra={"event": event})
