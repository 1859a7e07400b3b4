"""The SQL text the server sends to the sidecar around a client's statement. No I/O.

Rules:
- A session's settings travel with each statement as one step before it, which sets
  them for that transaction only (``set_config(…, true)``), as parameters: a value
  is never spliced into the text.
- What a statement's own ``set_config`` calls set is read back, in the same
  transaction, by one step after it (``current_setting``), so the session keeps it
  as SET or SET LOCAL would.
- A text depends only on how many settings it carries: one per count, made once.
"""

from __future__ import annotations

from functools import cache

__all__ = ["read_settings", "set_settings"]


@cache
def set_settings(count: int) -> str:
    """The step that sets ``count`` settings for the transaction: parameters name, value,
    name, value…"""
    return "SELECT " + ", ".join(f"set_config(${2 * i + 1}, ${2 * i + 2}, true)"
                                 for i in range(count))


@cache
def read_settings(count: int) -> str:
    """The step that reads ``count`` settings back: parameters name, name…"""
    return "SELECT " + ", ".join(f"current_setting(${i + 1})" for i in range(count))
