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

__all__ = ["CallArgs", "CallKey", "Request", "StatementContext", "WorkedOut", "args_key",
           "touch_key"]

CallKey = tuple[str, Any]  # (resource, CallArgs.identity_as): a call's identity
# A statement's calls worked out already, by the ``id`` of their reference (which each
# entry holds, so that no other object takes that ``id`` meanwhile).
WorkedOut = dict[int, tuple[Any, list["CallArgs"]]]


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

    Nothing else is part of a call's identity but whose credentials make it
    (``identity_as``): two references whose arguments are equal share one call. Its
    arguments never change once made, so its identity and its touch's key are worked
    out once, when first asked for (a call is looked up by them several times in one
    statement)."""

    keys: dict[str, Any]
    where: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    limit: int | None = None
    _identity: Any = field(default=None, init=False, repr=False, compare=False)
    _shown_key: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def identity(self) -> Any:
        found = self._identity
        if found is None:
            where = tuple(sorted((c, tuple((op, _frozen(v)) for op, v in conds))
                                 for c, conds in self.where.items()))
            found = (args_key(self.keys), args_key(dict(where)), self.limit)
            object.__setattr__(self, "_identity", found)
        return found

    def identity_as(self, credential: str | None) -> Any:
        """The identity of this call made with ``credential`` (``Resource.credential_of``:
        a role's name, never a secret): its arguments' alone when it is None (every
        user's call is the same), else theirs with it, so that no cache gives one role's
        rows to another."""
        return self.identity if credential is None else (self.identity, credential)

    def touch_key(self, resource: str, verb: str) -> tuple[str, str, Any]:
        """``touch_key(resource, verb, self.shown())``, the shown arguments' key made once."""
        found = self._shown_key
        if found is None:
            found = args_key(self.shown())
            object.__setattr__(self, "_shown_key", found)
        return resource, verb, found

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
    copy: Any = None  # the client's side of a COPY (``catalog.CopyChannel``), if it can
    # The rows the Execute running asks for (0: all): a read may give those alone, and
    # leave the rest to the portal's next Executes (``portal_parts.read``).
    fetch: int = 0
    # A simple Query (or an in-process ``execute``): a FETCH's rows then come in its
    # cursor's format (BINARY or text), as Postgres sends them; through Bind, in the Bind's.
    simple: bool = False


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
    spilled: list[Any] = field(default_factory=list)  # tables of its own (cache.py's Kept)
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

