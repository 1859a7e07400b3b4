"""The scopes of reuse: one client request, and one statement within it.

Rules:
- A ``Request`` (a Query message, or the messages up to Sync) is the scope of
  ``stable`` results: one call per identity for the whole request.
- A ``StatementContext`` is the scope of exactly-once: its memo holds one
  future per call identity, so however often the statement names a call, it is
  made once. It also gathers what the statement touched and noticed, and the
  calls planned so far against the call budget.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from .result import Notice, Touched

__all__ = ["CallKey", "Request", "StatementContext", "args_key"]

CallKey = tuple[str, Any]  # (resource, arguments key): a call's identity


def args_key(binding: dict[str, Any]) -> Any:
    """A hashable key of a call's arguments (JSON text only for unhashable values)."""
    key = tuple(sorted(binding.items()))
    try:
        hash(key)
    except TypeError:
        return json.dumps(binding, sort_keys=True, default=str)
    return key


@dataclass
class Request:
    """One client request (one ``execute`` call): the scope of ``stable`` results."""

    formats: tuple[int, ...] = ()  # result format codes the client asked for
    stable: dict[CallKey, asyncio.Future[Any]] = field(default_factory=dict)


@dataclass
class StatementContext:
    """One statement: its memo of calls, and what it touched and noticed."""

    request: Request
    sql: str = ""
    planned: int = 0  # resolver calls decided so far, against the call budget
    memo: dict[CallKey, asyncio.Future[Any]] = field(default_factory=dict)
    touched: dict[tuple[str, str, Any], Touched] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)

    def touch(self, resource: str, verb: str, args: dict[str, Any], called: bool) -> Touched:
        key = (resource, verb, args_key(args))
        t = self.touched.get(key)
        if t is None:
            t = self.touched[key] = Touched(resource, verb, dict(args))
        if called:
            t.calls += 1
        return t
