"""Statements' ends as events of the log (``server/logs.py`` turns them on in JSON mode).

Rules:
- An end is logged at INFO when the statements' logger is on, and as a WARNING
  when it took ``slow_statement_s`` or longer, whichever the logger's level.
- It says what ran, as Postgres' ``log_min_duration_statement`` does, but with no
  value: its text normalized (every constant a ``$n``, as the traces have it;
  ``log_statement_text = "none"``: not at all), the resources it called, its
  calls and its rows. So an operator sees which tool a slow statement waited on.
- The statement's text as the client sent it is in the event only under DEBUG
  (``-v``).
"""

from __future__ import annotations

import logging
from typing import Any

from glove_scratchpad.traces import normalized

from .statement import Statement

__all__ = ["ENDS", "log_end", "logs_ends"]

ENDS = logging.getLogger("glove_scratchpad.statements")


def logs_ends() -> bool:
    """Whether every statement's end is an event (not only a slow one's)."""
    return ENDS.isEnabledFor(logging.INFO)


def log_end(number: str, user: str, session_id: int, sql: str, kind: str,
            st: Statement | None, outcome: str, elapsed: float, slow: float | None,
            text: str = "normalized") -> None:
    """A statement's end as an event of the log: ``number`` is its id (session:count);
    ``text``: ``log_statement_text``."""
    called = list(st.called) if st is not None else []
    event: dict[str, Any] = {
        "event": "statement", "statement": number, "session": session_id, "user": user,
        "kind": kind, "duration_ms": round(elapsed * 1000, 3),
        "calls": st.calls if st is not None else 0, "resources": called,
        "rows": st.rows if st is not None else None, "outcome": outcome}
    said = f" [{', '.join(called)}]" if called else ""
    if text == "normalized":
        event["query"] = normalized(sql)
        said = f": {event['query']}{said}"
    if ENDS.isEnabledFor(logging.DEBUG):
        event["sql"] = sql
    if slow is not None and elapsed >= slow:
        ENDS.warning("slow statement: %s took %.0f ms (slow_statement_s is %g)%s",
                     kind, elapsed * 1000, slow, said,
                     extra={"event": event | {"event": "slow_statement"}})
    else:
        ENDS.info("%s %s in %.1f ms%s", kind, outcome, elapsed * 1000, said,
                  extra={"event": event})
