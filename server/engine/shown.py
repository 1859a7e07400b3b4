"""What a statement's result shows its client: rows up to the row limit, and the
notices its ``client_min_messages`` lets through.

Rules:
- A result over the row limit (the server's or the role's, the lower) is cut there,
  with a NOTICE that says how to read the rows wanted; a SELECT's tag counts the rows
  sent.
- A result larger than ``max_result_bytes`` is refused (54000), never sent in part.
"""

from __future__ import annotations

from collections.abc import Mapping

from glove_scratchpad import errors

from .guard import Limits
from .result import Notice, Result

__all__ = ["bounded", "shown"]

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


def bounded(result: Result, limits: Limits, role_row_limit: int | None) -> Result:
    """Cut a result at the row limit (with a NOTICE); refuse one too large to send."""
    cuts = [n for n in (limits.row_limit, role_row_limit) if n]
    rows = result.data_rows
    if cuts and len(rows) > min(cuts):
        n = min(cuts)
        del rows[n:]
        if result.command_tag.startswith("SELECT"):
            result.command_tag = f"SELECT {n}"
        result.notices.append(Notice(
            f"result truncated to {n} rows (the row limit)",
            hint="Add WHERE or LIMIT to read the rows you need, or ORDER BY to choose "
            "which come first."))
    size = sum(len(r.raw_body) for r in rows)
    if size > limits.max_result_bytes:
        raise errors.ProgramLimitExceeded(
            f"the result is {size} bytes; at most {limits.max_result_bytes} may "
            "be sent", hint="Select fewer columns or rows.")
    return result
