"""The scopes of reuse: one client request, and the identity of one call within it.

Rules:
- A ``Request`` (a Query message, or the messages up to Sync) is the scope of
  ``stable`` results: one call per identity for the whole request.
- A statement (``statement.Statement``) is the scope of exactly-once: its memo
  holds one future per call identity (``CallKey``, of a call's ``CallArgs``), so
  however often the statement names a call, it is made once.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallArgs", "CallKey", "Request", "WorkedOut", "args_key", "touch_key"]

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
    """What tells a statement's distinct calls apart (``Statement.touch``)."""
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
