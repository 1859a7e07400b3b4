"""The ``scratchpad`` schema's views, answering for the session whose statement runs.

Rules:
- The views are resources like any other (shell tables in ``scratchpad``), so
  ``\\d``, ``information_schema`` and joins work on them unchanged.
- Their rows come from the session running the statement, set in ``CURRENT``
  for the statement's life: the staged writes are that session's own, and the
  audit is that session's (an administrator's: every session's).
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

from glove_scratchpad.resources import Bindings, Resource, define_resource

from ._audit import AUDIT_COLUMNS

__all__ = ["CURRENT", "SYSTEM_VIEWS", "ViewSource"]


class ViewSource(Protocol):
    """What the views read: the running session."""

    def staged_rows(self) -> list[dict[str, Any]]: ...

    def resource_rows(self) -> list[dict[str, Any]]: ...

    async def call_rows(self) -> list[dict[str, Any]]: ...


CURRENT: contextvars.ContextVar[ViewSource] = contextvars.ContextVar("glove_view_source")

_STAGED_COLUMNS = [("id", "bigint"), ("resource", "text"), ("verb", "text"),
                   ("statement", "text"), ("calls", "text"), ("status", "text")]
_RESOURCE_COLUMNS = [("name", "text"), ("description", "text"), ("verbs", "text"),
                     ("volatility", "text"), ("keys", "text"), ("primary_key", "text")]


def _staged(b: Bindings) -> list[dict[str, Any]]:
    return CURRENT.get().staged_rows()


def _resources(b: Bindings) -> list[dict[str, Any]]:
    return CURRENT.get().resource_rows()


async def _calls(b: Bindings) -> list[dict[str, Any]]:
    return await CURRENT.get().call_rows()


SYSTEM_VIEWS: dict[str, Resource] = {r.name: r for r in (
    define_resource("staged", columns=_STAGED_COLUMNS, volatility="volatile",
                    description="The writes this session has staged in its open transaction.",
                    select=_staged),
    define_resource("resources", columns=_RESOURCE_COLUMNS, volatility="volatile",
                    description="Every resource: its verbs, volatility and keys.",
                    select=_resources),
    define_resource("calls", columns=AUDIT_COLUMNS, volatility="volatile",
                    description="The audit of tool calls: this session's (an "
                    "administrator's: every session's).", select=_calls),
)}
