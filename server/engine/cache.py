"""Kept calls: the results that stay, as sidecar tables that statements read in place.

Rules:
- A call is kept when its resource is ``immutable`` (for the server's life) or
  ``stable`` with a ``ttl`` (for that long), it is the one call of its reference,
  no overlay of the session changes its rows, and it gave between
  ``cache_min_rows`` and ``cache_max_rows`` rows. Smaller calls travel with the
  statement (as cheap as reading a table), and stay in memory as before; larger
  ones are not kept, and EXPLAIN says so.
- A kept call is one table per (sidecar database, resource, call identity), made
  once (concurrent statements share the making) and read by every later
  statement of any session of that view whose user's calls carry the same
  credentials (``Resource.credential_of``, part of the identity): the rewrite
  points the reference at it, and no row is sent again. Its name is the identity's hash, so a
  statement's rewritten text, and the sidecar's prepared statement for it, stay
  the same while the call is kept.
- A kept call goes when its ttl ends, when a write fires through its resource
  (``Database.invalidate``), on ``SELECT scratchpad.refresh('resource')``, or
  when the kept tables pass ``cache_bytes`` (least recently used first). A table
  that goes is forgotten at once and dropped once no statement that could have
  read it is still running (the statement timeout), or at close.
- A call that is not kept (volatile, stable without a ttl, or too large) but
  gave at least ``spill_min_rows`` rows is *spilled*: copied the same way into a
  table that only its statement reads (no index, no statistics), dropped when
  the statement ends. Binary COPY is cheaper than rows sent as parameters.
- A kept table is indexed on the primary key when it is made, then for the
  lookups of the statements that read it (``Reference.lookups``: the columns
  compared with =, IN or a range, a join's included): the equality columns, then
  one range column, unless an index already leads with the first. A required key is
  never indexed: a kept table is one call's, and its rows all hold the call's value.
  The index is built in the background, never in a statement's way (until it exists,
  statements read the table as it is), then the table is analyzed again; at most
  ``MAX_INDEXES`` per table. ``scratchpad.cache`` lists them.
- Failing to materialize never fails a statement: its rows are sent with it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pglast import ast

from glove_scratchpad import errors, metrics
from glove_scratchpad.background import hold
from glove_scratchpad.catalog import SYSTEM_VIEWS, CacheStore, reconnecting

from .context import CallArgs
from .result import Result, Touched

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from glove_scratchpad.resources import Resource

    from ..sql.analysis import Reference
    from .guard import Limits

__all__ = ["Kept", "KeptCalls", "Touching", "lasting", "system_call_name", "system_call_text"]

log = logging.getLogger(__name__)


class Touching(Protocol):
    """A statement, as a read of a kept call records its touch (``Statement.touch``)."""

    def touch(self, resource: str, verb: str, args: dict[str, Any], called: bool,
              key: tuple[str, str, Any] | None = None) -> Touched: ...

DROP_GRACE = 1.0  # seconds past the statement timeout before a forgotten table is dropped
MAX_INDEXES = 4  # indexes one kept table may have, the one it is made with included


def lasting(resource: Resource) -> bool:
    """Whether a resource's calls outlive one request: immutable, or stable with a ttl."""
    return (resource.volatility == "immutable" or (
        resource.volatility == "stable" and resource.ttl is not None)
    ) and resource.name not in SYSTEM_VIEWS


def system_call_name(call: Any) -> str:
    """``restage`` or ``refresh``: the function of a ``system_call``."""
    return str(call.funcname[-1].sval)


def call_number(call: Any, params: list[Any]) -> Any:
    """The one number argument of a call standing alone (``allowlist.system_call``,
    ``backend_call``): the number, or ``$n``'s value as the client sent it (a binary
    integer is read as one; text stays text); None for a NULL. The caller says what a
    value that is not a number means."""
    arg: Any = call.args[0] if call.args else None
    if isinstance(arg, ast.TypeCast):
        arg = arg.arg
    if isinstance(arg, ast.A_Const):
        return getattr(arg.val, "ival", None) if arg.val is not None else None
    if not (isinstance(arg, ast.ParamRef) and arg.number is not None
            and 0 < arg.number <= len(params)):
        return None
    param = params[arg.number - 1]
    value = getattr(param, "value", param)
    if isinstance(value, bytes) and getattr(param, "format", 0) == 1:
        return int.from_bytes(value, "big", signed=True)
    return value.decode() if isinstance(value, bytes) else value


def system_call_text(call: Any, params: list[Any]) -> str:
    """The one text argument of a ``system_call`` (a string, or ``$n``'s value)."""
    arg = call.args[0].arg if isinstance(call.args[0], ast.TypeCast) else call.args[0]
    if isinstance(arg, ast.A_Const):
        assert isinstance(arg.val, ast.String)  # system_call let only a string or $n through
        return str(arg.val.sval)
    assert isinstance(arg, ast.ParamRef)
    value = None
    if arg.number is not None and 0 < arg.number <= len(params):
        value = getattr(params[arg.number - 1], "value", params[arg.number - 1])
    if value is None:
        schema = call.funcname[0].sval
        raise errors.InvalidParameterValue(
            f"{schema}.{system_call_name(call)}() takes a table's name, not NULL",
            hint=f"SELECT resource FROM {schema}.cache lists the kept calls.")
    return value.decode() if isinstance(value, bytes) else str(value)


Key = tuple[str, str, Any]  # (database, resource, call identity)


@dataclass
class Kept:
    """One kept call: a table in one sidecar database."""

    table: str  # qualified, as the rewrite names it
    name: str
    database: str
    resource: str
    arguments: dict[str, Any]
    user: str | None
    rows: int
    bytes: int = 0
    made_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    deadline: float | None = None  # time.monotonic() when it goes (ttl)
    hits: int = 0
    lasting: bool = True  # False: spilled, read by one statement and dropped
    indexes: list[tuple[str, ...]] = field(default_factory=list)  # the columns of each
    building: set[tuple[str, ...]] = field(default_factory=set)  # indexes being made
    # Whose credentials made the call (``Resource.credential_of``); None: every user's.
    credential: str | None = None

    @property
    def expires_at(self) -> dt.datetime | None:
        if self.deadline is None:
            return None
        return dt.datetime.now(dt.UTC) + dt.timedelta(seconds=self.deadline - time.monotonic())

    def fresh(self) -> bool:
        return self.deadline is None or time.monotonic() < self.deadline


class KeptCalls:
    """The kept calls of one Database, over the stores of its sidecar databases."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.stores: dict[str, CacheStore] = {}  # by sidecar database
        self.entries: OrderedDict[Key, Kept] = OrderedDict()  # least recently used first
        self.making: dict[Key, asyncio.Future[Kept | None]] = {}
        self.too_large: dict[str, int] = {}  # resource -> rows of a call not kept
        self.deadlines: dict[Any, float] = {}  # in-memory calls with a ttl -> deadline
        self._generation = 0
        self._dead: list[tuple[str, str, float]] = []  # (database, table, drop after)
        self._reopening: asyncio.Future[None] | None = None
        self._dropping: set[asyncio.Task[None]] = set()  # spilled tables going
        self._indexing: set[asyncio.Task[None]] = set()  # indexes being built

    # -- in memory: the deadlines of ttl calls -------------------------------------

    def stale(self, key: Any) -> bool:
        """Whether an in-memory call (resource, identity) has outlived its ttl."""
        deadline = self.deadlines.get(key)
        if deadline is None or time.monotonic() < deadline:
            return False
        del self.deadlines[key]
        return True

    def started(self, key: Any, ttl: float | None) -> None:
        if ttl is not None:
            self.deadlines[key] = time.monotonic() + ttl

    # -- tables ------------------------------------------------------------------

    def eligible(self, ref: Reference, database: str) -> bool:
        """Whether a reference's call may be kept in ``database``'s store (the caller
        knows whether the session's own writes change its rows)."""
        return lasting(ref.resource) and database in self.stores

    def keeps(self, database: str, rows: int) -> bool:
        """Whether a call of this many rows, eligible, is kept as a table: its rows then
        live in the table, not in memory."""
        return (database in self.stores
                and self.limits.cache_min_rows <= rows <= self.limits.cache_max_rows)

    async def read(self, ref: Reference, call: CallArgs, ctx: Touching,
                   fetch: Callable[[], Awaitable[list[dict]]], *, database: str, user: str
                   ) -> Kept | list[dict]:
        """The call's kept table in ``database``, made from ``fetch()``'s rows if it is
        not yet; or the rows themselves when the call is not kept."""
        resource = ref.resource
        credential = resource.credential_of(user)
        key: Key = (database, resource.name, call.identity_as(credential))
        found = self.find(key)
        if found is not None:
            found.hits += 1
            metrics.kept("hit")
            touched = ctx.touch(resource.name, "select", call.shown(), called=False,
                                key=call.touch_key(resource.name, "select"))
            touched.rows, touched.kept = found.rows, True
            self.index_for(found, ref.lookups, ref.resource.keys)
            return found
        metrics.kept("miss")
        rows = await fetch()
        limits = self.limits
        if len(rows) > limits.cache_max_rows:
            self.too_large[resource.name] = len(rows)
        if not self.keeps(database, len(rows)):
            return rows
        pending = self.making.get(key)
        if pending is not None:
            made = await asyncio.shield(pending)
            return made if made is not None else rows
        pending = self.making[key] = asyncio.get_running_loop().create_future()
        made = None
        try:
            made = await self._make(key, resource, call, rows, user, credential)
        except (OSError, errors.SqlError, Exception) as exc:  # the rows still answer
            log.warning("call of %s not kept: %s", resource.name, exc)
        finally:
            del self.making[key]
            pending.set_result(made)
        if made is None:
            return rows
        self.index_for(made, ref.lookups, ref.resource.keys)
        return made

    def index_for(self, kept: Kept, lookups: Sequence[tuple[str, str]],
                  keys: Sequence[str] = ()) -> None:
        """Build, in the background, the index a statement's lookups of a kept table want
        (the equality columns, then one range column), unless one leads with its first
        column, one is being built, or the table has ``MAX_INDEXES``. A required key is
        never indexed: every row of one call's table holds the call's value of it."""
        eq = list(dict.fromkeys(c for c, how in lookups if how == "eq" and c not in keys))
        ranges = [c for c, how in lookups if how == "range" and c not in eq and c not in keys]
        columns = (*eq, *ranges[:1])
        store = self.stores.get(kept.database)
        if (not columns or not kept.lasting or store is None
                or any(ix[0] == columns[0] for ix in (*kept.indexes, *kept.building))
                or len(kept.indexes) + len(kept.building) >= MAX_INDEXES):
            return
        kept.building.add(columns)
        hold(self._index(store, kept, columns), self._indexing)

    async def _index(self, store: CacheStore, kept: Kept, columns: tuple[str, ...]) -> None:
        try:
            kept.bytes = await store.index(kept.name, columns)
            kept.indexes.append(columns)
        except (OSError, errors.SqlError, Exception) as exc:  # dropped, or the store closing
            log.info("kept table %s not indexed on %s: %s", kept.table, columns, exc)
        finally:
            kept.building.discard(columns)

    async def spill(self, resource: Resource, rows: list[dict], *, database: str, user: str
                    ) -> Kept | None:
        """One statement's rows of a call, copied into a table of their own in
        ``database``; None when there is no store (the rows travel with the statement).
        ``discard`` drops it."""
        store = self.stores.get(database)
        if store is None:
            return None
        try:
            name = await store.spill(resource, rows)
        except (OSError, errors.SqlError, Exception) as exc:  # the rows still answer
            log.warning("rows of %s not spilled: %s", resource.name, exc)
            return None
        return Kept(store.qualified(name), name, database, resource.name, {}, user,
                    len(rows), 0, lasting=False)

    def discard(self, spilled: list[Kept]) -> None:
        """Drop spilled tables, their statement done (in the background)."""
        for database in {k.database for k in spilled}:
            store = self.stores.get(database)
            if store is not None:
                names = [k.name for k in spilled if k.database == database]
                hold(store.drop(names), self._dropping).add_done_callback(self._dropped)

    def _dropped(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.warning("spilled tables not dropped: %s", task.exception())

    def find(self, key: Key) -> Kept | None:
        """The fresh kept call of a key, now the most recently used; or None."""
        found = self.entries.get(key)
        if found is None:
            return None
        if not found.fresh():
            self._forget(key)
            return None
        self.entries.move_to_end(key)
        return found

    async def _make(self, key: Key, resource: Resource, call: CallArgs, rows: list[dict],
                    user: str, credential: str | None) -> Kept:
        database = key[0]
        store = self.stores[database]
        digest = hashlib.sha1(repr(key[1:]).encode()).hexdigest()[:16]
        self._generation += 1
        name = store.table_name(digest, self._generation)
        deadline = None
        if resource.ttl is not None:
            deadline = self.deadlines.get((resource.name, key[2])) or (
                time.monotonic() + resource.ttl)
        size = await store.make(name, resource, rows)
        first = resource.primary_key  # the store's one index (a key is one value here)
        kept = Kept(store.qualified(name), name, database, resource.name, call.shown(),
                    user, len(rows), size, deadline=deadline,
                    indexes=[tuple(first)] if first else [], credential=credential)
        self.entries[key] = kept
        await self._evict()
        return kept

    async def _evict(self) -> None:
        total = sum(k.bytes for k in self.entries.values())
        for key in list(self.entries):
            if total <= self.limits.cache_bytes:
                break
            total -= self.entries[key].bytes
            self._forget(key)
            metrics.kept("evicted")
        metrics.kept("made", bytes_now=total)
        await self.reap()

    def _forget(self, key: Key) -> None:
        kept = self.entries.pop(key)
        grace = self.limits.statement_timeout + DROP_GRACE
        self._dead.append((kept.database, kept.name, time.monotonic() + grace))

    async def reap(self, everything: bool = False) -> None:
        """Drop the forgotten tables that no running statement can still read."""
        now = time.monotonic()
        due = [d for d in self._dead if everything or d[2] <= now]
        if not due:
            return
        self._dead = [d for d in self._dead if d not in due]
        for database in {d[0] for d in due}:
            store = self.stores.get(database)
            if store is not None:
                await store.drop([d[1] for d in due if d[0] == database])

    def invalidate(self, resource: str) -> int:
        """Forget every kept call of a resource; how many there were."""
        keys = [k for k in self.entries if k[1] == resource]
        for key in keys:
            self._forget(key)
        for key in [k for k in self.deadlines if k[0] == resource]:
            del self.deadlines[key]
        return len(keys)

    async def refresh(self, name: str, forget: Callable[[str], None]) -> Result:
        """``SELECT scratchpad.refresh('resource')``: its kept calls go now, through
        ``forget`` (which forgets its calls in memory too)."""
        n = len([k for k in self.entries if k[1] == name])
        forget(name)
        await self.reap()
        return Result.text("SELECT 1", ["refresh"], [(
            f"dropped {n} kept call{'s' if n != 1 else ''} of {name}",)])

    def rows(self, database: str, user: str, admin: bool) -> list[dict[str, Any]]:
        """``scratchpad.cache``: the kept calls of a view's ``database``; the arguments
        of another user's call only for an administrator. A call made with a role's own
        credentials is shown to that role alone (an administrator sees every one, and
        whose credentials made it)."""
        out = []
        for key, kept in list(self.entries.items()):
            if key[0] != database or not kept.fresh():
                continue
            mine = admin or kept.user == user
            if kept.credential is not None and not mine:
                continue
            out.append({"resource": kept.resource,
                        "arguments": kept.arguments if mine else None,
                        "rows": kept.rows, "bytes": kept.bytes, "made_at": kept.made_at,
                        "expires_at": kept.expires_at, "hits": kept.hits,
                        "table_name": kept.table,
                        "indexes": "; ".join(f"({', '.join(ix)})" for ix in kept.indexes)
                        or None, "credential": kept.credential})
        return out

    def explain_lines(self, refs: list[Reference], database: str, visible: frozenset[str],
                      system: str, user: str = "") -> list[str]:
        """EXPLAIN's line per lasting resource the references read, as the view of
        ``database`` (its ``visible`` resources) keeps their calls for ``user``: another
        role's own calls are not shown."""
        lines = []
        limits = self.limits
        for resource in {r.resource.name: r.resource for r in refs}.values():
            if not lasting(resource) or resource.name not in visible:
                continue
            credential = resource.credential_of(user)
            kept = [k for key, k in self.entries.items()
                    if key[0] == database and key[1] == resource.name and k.fresh()
                    and k.credential in (None, credential)]
            how = (f"for {resource.ttl:g} s" if resource.ttl is not None
                   else "until a write through it")
            line = (f"Cache: calls of {resource.name} with {limits.cache_min_rows} to "
                    f"{limits.cache_max_rows} rows are kept in the sidecar {how}; "
                    f"{len(kept)} kept now")
            if kept:
                line += (" (" + ", ".join(f"{k.rows} rows in {k.table}" for k in kept[:3])
                         + f"; SELECT {system}.refresh('{resource.name}') "
                         "drops them)")
            large = self.too_large.get(resource.name)
            if large is not None:
                line += (f"; a call gave {large} rows, above cache_max_rows: not kept, its "
                         "rows are sent with each statement")
            lines.append(line)
        return lines

    def lost(self, database: str, reopen: Callable[[], Awaitable[None]]) -> None:
        """The store's connection went (the sidecar restarted, emptying UNLOGGED
        tables): forget its kept calls, and open it again in the background."""
        self.stores.pop(database, None)
        for key in [k for k in self.entries if k[0] == database]:
            del self.entries[key]
        self._dead = [d for d in self._dead if d[0] != database]
        self._reopening = asyncio.ensure_future(self._reopen(reopen))

    async def _reopen(self, reopen: Callable[[], Awaitable[None]]) -> None:
        """The store opened again as every exchange with the sidecar waits for it
        (catalog's one reconnect policy)."""
        try:
            await reconnecting(reopen)
        except errors.SqlError as exc:  # the sidecar stayed down: calls are not kept
            log.warning("kept tables' store not reopened: %s", exc)

    async def close(self) -> None:
        if self._reopening is not None:
            self._reopening.cancel()
        for task in list(self._indexing):
            task.cancel()
        await asyncio.gather(*self._indexing, return_exceptions=True)
        if self._dropping:
            await asyncio.gather(*self._dropping, return_exceptions=True)
        self.entries.clear()
        for store in self.stores.values():
            await store.close()
        self.stores.clear()
        self._dead.clear()
