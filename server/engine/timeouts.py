"""How long a statement may take: the server's cap, lowered by the role and by SET.

Rules:
- A client's ``statement_timeout`` only lowers the cap; ``0`` means no client limit,
  never no limit.
- A cancel or a timeout that comes after a write outside BEGIN was sent is too late:
  the statement answers the write's outcome, with a NOTICE (``late_notice``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from glove_scratchpad import errors

from .result import Notice, Result

__all__ = ["duration", "late_notice", "late_noticed", "timed_out", "timeout"]

_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def timeout(server: float, role: float | None, settings: Mapping[str, str]) -> float:
    """Seconds a statement may take: the server's cap, lowered by the role's and by SET."""
    limit = min(server, role) if role else server
    client = duration(settings.get("statement_timeout", "0"))
    return min(limit, client) if client else limit


@functools.lru_cache(maxsize=256)
def duration(text: str) -> float:
    """Seconds of a Postgres duration setting as set_config spells it ("250ms", "5s", "0")."""
    text = text.strip()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    try:
        return float(number) * _UNITS.get(text[len(number):].strip(), 1e-3)
    except ValueError:
        return 0.0


def timed_out() -> errors.SqlError:
    """The error of a statement that ran past its timeout."""
    return errors.QueryCanceled(
        "canceling statement due to statement timeout",
        hint="Narrow the statement (fewer calls, a smaller IN list), or raise "
        "statement_timeout within the server's limit.")


def late_notice(timed: bool) -> Notice:
    """The NOTICE of a write outside BEGIN that a cancel (or its timeout) came too late
    to stop: its request had been sent, so it ran to its end, and this is its outcome."""
    what = "the statement timeout" if timed else "the cancel request"
    return Notice(f"{what} came too late: the write had been sent, so it ran to its end "
                  "and this is its outcome",
                  hint="A write outside BEGIN is not canceled once its request has left, "
                  "like COMMIT; the journal records the same outcome.")


def late_noticed(result: Result, late: bool, timed: bool) -> Result:
    """``result``, with the NOTICE of a cancel (``timed``: its timeout) that came too
    late, when one did (``late``)."""
    if late:
        result.notices.append(late_notice(timed))
    return result
