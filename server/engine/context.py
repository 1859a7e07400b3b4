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
import time
from dataclasses import dataclass, field
from typing import Any

from .result import Notice, Touched

__all__ = ["CallArgs", "CallKey", "Request", "StatementContext", "args_key", "touch_key"]

CallKey = tuple[str, Any]  # (resource, arguments key): a call's identity


def args_key(binding: dict[str, Any]) -> Any:
    """A hashable key of a call's arguments (JSON text only for unhashable values)."""
    key = tuple(sorted(binding.items()))
    try:
        hash(key)
    except TypeError:
        return json.dumps(binding, sort_keys=True, default=str)
    return key


def touch_key(resource: str, verb: str, args: dict[str, Any]) -> tuple[str, str, Any]:
    """What tells a statement's distinct calls apart (``StatementContext.touch``)."""
    return resource, verb, args_key(args)


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list | tuple) else value


def _conditions(conds: Any) -> set[tuple[str, Any]]:
    return {(op, _frozen(v)) for op, v in conds}


@dataclass(frozen=True, slots=True)
class CallArgs:
    """One call's arguments: its keys (one value each), its filters' conditions, its limit.

    Nothing else is part of a call's identity: two references whose arguments are
    equal share one call."""

    keys: dict[str, Any]
    where: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    limit: int | None = None

    @property
    def identity(self) -> Any:
        where = tuple(sorted((c, tuple((op, _frozen(v)) for op, v in conds))
                             for c, conds in self.where.items()))
        return args_key(self.keys), args_key(dict(where)), self.limit

    def covers(self, other: CallArgs) -> bool:
        """Whether this call's rows hold every row of ``other``'s: the same keys, no limit,
        and conditions that ``other`` only adds to (Postgres applies them afterwards)."""
        return (self.limit is None and self.keys == other.keys and all(
            _conditions(conds) <= _conditions(other.where.get(c, ()))
            for c, conds in self.where.items()))

    def values(self) -> dict[str, tuple[Any, ...]]:
        """What Bindings.one/all read: keys, and filters' = and IN values."""
        out: dict[str, tuple[Any, ...]] = {k: (v,) for k, v in self.keys.items()}
        for column, conds in self.where.items():
            vals = [x for op, v in conds if op in ("=", "in")
                    for x in (v if op == "in" else [v])]
            if vals:
                out[column] = tuple(vals)
        return out

    def shown(self) -> dict[str, Any]:
        """The arguments as the audit and ``Result.touched`` show them."""
        out: dict[str, Any] = dict(self.keys)
        for column, conds in self.where.items():
            for op, v in conds:
                out[column if op == "=" else f"{column} {op}"] = v
        if self.limit is not None:
            out["limit"] = self.limit
        return out


@dataclass
class Request:
    """One client request (one ``execute`` call): the scope of ``stable`` results."""

    stable: dict[CallKey, asyncio.Future[Any]] = field(default_factory=dict)


@dataclass
class StatementContext:
    """One statement: its memo of calls, and what it touched and noticed."""

    request: Request
    sql: str = ""
    planned: int = 0  # resolver calls decided so far, against the call budget
    memo: dict[CallKey, asyncio.Future[Any]] = field(default_factory=dict)
    calls: dict[CallKey, CallArgs] = field(default_factory=dict)  # the arguments of each
    touched: dict[tuple[str, str, Any], Touched] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)  # its timeout counts from here
    timed: bool = True  # under the statement timeout (a COMMIT's writes are not)
    spilled: list[Any] = field(default_factory=list)  # tables of its own (keep.py's Kept)
    formats: tuple[int, ...] = ()  # its result columns' format codes (the Bind rule)

    def notice(self, notice: Notice) -> None:
        """Add a NOTICE once, however many reads of the statement give it."""
        if notice not in self.notices:
            self.notices.append(notice)

    def touch(self, resource: str, verb: str, args: dict[str, Any], called: bool,
              key: tuple[str, str, Any] | None = None) -> Touched:
        """The statement's record of a distinct call (``key``: ``touch_key`` of it, when
        it is known already), counted when it was ``called``."""
        if key is None:
            key = touch_key(resource, verb, args)
        t = self.touched.get(key)
        if t is None:
            t = self.touched[key] = Touched(resource, verb, dict(args))
        if called:
            t.calls += 1
        return t

