"""pg_cursors: the session's own cursors (``cursors.py``), as Postgres's view shows them.

Rules:
- ``pg_cursors`` and ``pg_catalog.pg_cursors`` name this resource (``statement.lookup``):
  the sidecar's view would show only its own cursors, of no statement of the client's.
- Its rows are those of the session running the statement (``CURRENT_VIEW_SOURCE``), read
  on the loop: a list in memory.
"""

from __future__ import annotations

import datetime
from typing import Any

from pydantic import BaseModel

from glove_scratchpad.catalog import CURRENT_VIEW_SOURCE
from glove_scratchpad.resources import Bindings, Resource, define_resource

__all__ = ["PG_CURSORS"]


class _CursorRow(BaseModel):
    name: str
    statement: str
    is_holdable: bool
    is_binary: bool
    is_scrollable: bool
    creation_time: datetime.datetime


def _session_cursors(b: Bindings) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = getattr(CURRENT_VIEW_SOURCE.get(), "cursor_rows", list)()
    return rows


# A resource's name may not start with pg_: this one's is its name within the engine.
PG_CURSORS: Resource = define_resource(
    "session_cursors", schema=_CursorRow, volatility="volatile", inline=True,
    description="The cursors this session has open (DECLARE), as Postgres's pg_cursors.",
    select=_session_cursors)
