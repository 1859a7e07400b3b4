"""What a statement's result shows its client: rows up to the row limit, and the
notices its ``client_min_messages`` lets through.

Rules:
- A result over the row limit (the server's or the role's, the lower) is cut there,
  with a NOTICE that says how to read the rows wanted; a SELECT's tag counts the rows
  sent.
- A result larger than ``max_result_bytes`` is refused (54000). One kept whole is
  never sent in part; one relayed as it came (``Result.relayed``, past
  ``stream.STREAM_AT`` bytes) stops at that size, and its error follows its rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter

from glove_scratchpad import errors
from glove_scratchpad.wire import DataRow

from .guard import Limits
from .result import Notice, Result

__all__ = ["bounded", "row_cut", "shown", "within"]

_RAW_BODY = attrgetter("raw_body")
_SEVERITY_RANK = {"DEBUG": 0, "LOG": 1, "INFO": 2, "NOTICE": 3, "WARNING": 4, "ERROR": 5}


def shown(result: Result, settings: Mapping[str, str]) -> Result:
    """The result with the notices the client's ``client_min_messages`` lets through
    (set by SET, or at start-up)."""
    if result.notices:
        level = settings.get("client_min_messages") or "NOTICE"
        floor = _SEVERITY_RANK.get(level.upper(), 3)
        result.notices = [n for n in result.notices
                          if _SEVERITY_RANK.get(n.severity, 3) >= floor]
    return result


def within(rows: Sequence[DataRow], limits: Limits, role_row_limit: int | None) -> bool:
    """Whether ``bounded`` would leave these rows as they are: none over the row limit,
    and few enough bytes to send."""
    cut = _cut(limits, role_row_limit)
    return ((cut is None or len(rows) <= cut)
            and sum(map(len, map(_RAW_BODY, rows))) <= limits.max_result_bytes)


def bounded(result: Result, limits: Limits, role_row_limit: int | None) -> Result:
    """Cut a result at the row limit (with a NOTICE); refuse one too large to send."""
    n = _cut(limits, role_row_limit)
    relayed = result.relayed
    if relayed is not None:  # cut and measured as it went (``stream.Stream``)
        if relayed.over:
            sent = f": it stopped after {relayed.sent} rows" if relayed.started else ""
            raise errors.ProgramLimitExceeded(
                f"the result is over {limits.max_result_bytes} bytes, the most that may be "
                f"sent{sent}", hint="Select fewer columns or rows.")
        if relayed.cut and n is not None:
            result.notices.append(_truncated(n))
        return result
    rows = result.data_rows
    if n is not None and len(rows) > n:
        del rows[n:]
        if result.command_tag.startswith("SELECT"):
            result.command_tag = f"SELECT {n}"
        result.notices.append(_truncated(n))
    size = sum(map(len, map(_RAW_BODY, rows)))
    if size > limits.max_result_bytes:
        raise errors.ProgramLimitExceeded(
            f"the result is {size} bytes; at most {limits.max_result_bytes} may "
            "be sent", hint="Select fewer columns or rows.")
    return result


def _truncated(n: int) -> Notice:
    return Notice(f"result truncated to {n} rows (the row limit)",
                  hint="Add WHERE or LIMIT to read the rows you need, or ORDER BY to choose "
                  "which come first.")


def row_cut(limits: Limits, role_row_limit: int | None) -> int | None:
    """``_cut``, without its list: it is asked once per relayed read."""
    server = limits.row_limit
    if not role_row_limit:
        return server or None
    return min(server, role_row_limit) if server else role_row_limit


def _cut(limits: Limits, role_row_limit: int | None) -> int | None:
    """The row limit in force: the server's or the role's, the lower; None for none."""
    cuts = [n for n in (limits.row_limit, role_row_limit) if n]
    return min(cuts) if cuts else None
