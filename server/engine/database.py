"""Database: resources served as one virtual database over one sidecar.

Rules:
- Each distinct set of visible resources (a role's view) gets a sidecar
  database of its own, so a hidden resource is absent from ``pg_catalog`` too.
- ``immutable`` calls are kept for the Database's life (until a write through
  their resource), at most ``IMMUTABLE_CACHE_SIZE``, least recently used out.
- Large lasting calls are kept as sidecar tables (``cache.py``), in every sidecar
  database a view uses; each database's store sweeps, when it opens, the kept
  tables of servers of this name that are no longer running.
- What a server of this name that is gone (its instance lock free) left firing is
  journaled ``in doubt``, at start and then every ``LOST_POLL`` seconds, while it
  runs (``Journal.settle_lost``).
- With ``retention_days``, the audit's calls and the journal's final transactions
  older than that are forgotten, at start and then hourly (``prune``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from glove_scratchpad import errors
from glove_scratchpad.catalog import (
    DEFAULT_NAME,
    LOST_POLL,
    SYSTEM_VIEWS,
    ApprovalStore,
    Audit,
    CacheStore,
    Catalog,
    EmbeddedSidecar,
    ExternalSidecar,
    Journal,
    Pool,
    Sidecar,
    Step,
    encode_param,
)
from glove_scratchpad.resources import Fn, FnCatalog, Resource

from .approval_rules import ApprovalRules
from .approvals import Approvals
from .cache import KeptCalls
from .guard import Guard, Limits
from .policy import Policy
from .result import Result, StagedWrite
from .session import Session
from .view import View

__all__ = ["Database"]

log = logging.getLogger(__name__)

IMMUTABLE_CACHE_SIZE = 100_000  # lasting calls whose rows are kept in memory (least recent go)
READY_TIMEOUT = 2.0  # seconds the readiness check waits for the sidecar
RETENTION_POLL = 3600.0  # seconds between prunings of the audit and the journal

class Database:
    """Resources served as one virtual database, over one sidecar."""

    def __init__(self, catalog: Catalog, resources: Sequence[Resource], writes: bool,
                 owns_catalog: bool, type_names: dict[int, str], limits: Limits,
                 fns: FnCatalog | None = None, approvals: ApprovalRules | None = None
                 ) -> None:
        self.catalog = catalog
        self.fns = fns if fns is not None else FnCatalog()
        self.limits = limits
        self.audit = Audit(catalog.pool, catalog.schemas.private)
        self.guard = Guard(limits, self.audit)
        self.journal = Journal(catalog.pool, catalog.schemas.private,
                               name=catalog.schemas.name, instance=catalog.instance or None)
        self.type_names = type_names
        self.resources = {r.name: r for r in resources}
        self.writes = writes
        self.approvals = Approvals(ApprovalStore(catalog.pool, catalog.schemas.private),
                                   approvals or ApprovalRules(), self.resources)
        self.immutable: LRUCache[Any, asyncio.Future[Any]] = LRUCache(IMMUTABLE_CACHE_SIZE)
        self.kept = KeptCalls(limits)  # lasting calls as sidecar tables
        self.sessions: weakref.WeakSet[Any] = weakref.WeakSet()  # every Session open
        self.workers = 1  # server processes sharing the sidecar (--workers); none share memory
        self._owns_catalog = owns_catalog
        self.schemas = catalog.schemas  # the name's schemas (catalog.schema_names)
        self.main = View(frozenset(self.resources), catalog.database,
                         self._pool(catalog))
        self._view_catalogs: list[Catalog] = []  # each holds its database's claim
        self._views: dict[frozenset[str], View] = {self.main.visible: self.main}
        self._view_lock = asyncio.Lock()
        self._default: Session | None = None
        # The sidecar's life: a dead embedded postmaster is restarted (if ours), and
        # each catalog holds its name again on a new connection.
        self._watchers: list[asyncio.Future[None]] = [asyncio.ensure_future(catalog.hold_claim())]
        if owns_catalog and catalog.owns_sidecar:
            self._watchers.append(asyncio.ensure_future(catalog.sidecar.watch()))
        if limits.retention_days is not None:
            self._watchers.append(asyncio.ensure_future(self._retain(limits.retention_days)))
        if self.journal.instance is not None:
            self._watchers.append(asyncio.ensure_future(self._settle_lost()))

    @property
    def pool(self) -> Pool:
        return self.main.pool

    async def view(self, visible: frozenset[str]) -> View:
        """The sidecar database holding exactly these resources' shell tables.

        A role that may not see a resource gets a database without it, so it is
        absent from information_schema and pg_catalog, not merely refused.
        """
        async with self._view_lock:
            found = self._views.get(visible)
            if found is None:
                digest = hashlib.sha1(",".join(sorted(visible)).encode()).hexdigest()[:12]
                name = f"{self.catalog.database}_v{digest}"
                catalog = await Catalog.open(self.catalog.sidecar, database=name,
                                             owns_sidecar=False, name=self.schemas.name,
                                             home=self.catalog.database)
                try:
                    await catalog.install([r for n, r in self.resources.items() if n in visible],
                                          system=list(SYSTEM_VIEWS.values()), fns=self.fns,
                                          login=self.catalog.login)
                except BaseException:
                    await catalog.close()
                    raise
                self._view_catalogs.append(catalog)
                await self.open_cache(catalog)
                self._watchers.append(asyncio.ensure_future(catalog.hold_claim()))
                found = self._views[visible] = View(visible, name, self._pool(catalog))
            return found

    def _pool(self, catalog: Catalog) -> Pool:
        """Statements' connections to a sidecar database: as the agent role, each with the
        server's statement timeout (a backstop, and what current_setting says; a session
        whose limit is lower sends its own), shared fairly among users."""
        agent = catalog.agent_sidecar
        limits = self.limits
        agent.parameters["statement_timeout"] = f"{int(limits.statement_timeout * 1000)}"
        return Pool(agent, catalog.database, share=limits.sidecar_share,
                    reserve=limits.sidecar_reserve)

    @classmethod
    async def create(
        cls,
        resources: Iterable[Resource] | None = None,
        *,
        writes: bool = False,
        sidecar_dsn: str | None = None,
        sidecar: Sidecar | None = None,
        sidecar_dir: str | Path | None = None,
        database: str | None = None,
        limits: Limits | None = None,
        fns: FnCatalog | Iterable[Fn] | None = None,
        name: str = DEFAULT_NAME,
        take_over: bool = False,
        approvals: ApprovalRules | None = None,
    ) -> Database:
        """Start (or find) the sidecar, install the resources' shell tables, and serve them.

        With no resources, the bundled demo set is served. ``sidecar`` shares an
        already started sidecar (tests share one per session); ``database``
        names the sidecar database to use in it. ``fns`` are the functions served
        as ``fn.<name>(…)``. ``name`` is the server's name, whose schemas it
        uses (``catalog.schema_names``); ``take_over`` replaces the tables of running
        servers of that name that serve other resources, instead of being refused.
        ``approvals``: which writes a person approves (``[approvals]``, docs/approvals.md).
        """
        if resources is None:
            from glove_scratchpad.resources.demo import resources as demo

            resources = demo
        resources = list(resources)
        names = [r.name for r in resources]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"two resources are named {', '.join(sorted(dupes))}")
        catalog_fns = fns if isinstance(fns, FnCatalog) else FnCatalog(fns or ())
        owns_sidecar = sidecar is None
        if sidecar is None:
            sidecar = ExternalSidecar(sidecar_dsn) if sidecar_dsn else EmbeddedSidecar(sidecar_dir)
        catalog = await Catalog.open(sidecar, database=database, owns_sidecar=owns_sidecar,
                                     name=name)
        try:
            # The audit's and journal's tables are made under the install lock too:
            # servers of one name start at once (workers, replicas).
            await catalog.install(resources, system=list(SYSTEM_VIEWS.values()), fns=catalog_fns,
                                  take_over=take_over,
                                  private_ddl=(Audit.ddl(catalog.schemas.private)
                                               + Journal.ddl(catalog.schemas.private)
                                               + ApprovalStore.ddl(catalog.schemas.private)),
                                  when_alone=(Journal.recovery(catalog.schemas.private)
                                              + ApprovalStore.recovery(
                                                  catalog.schemas.private)))
            type_names = await catalog.type_names()
        except BaseException:
            await catalog.close()
            raise
        db = cls(catalog, resources, writes, owns_catalog=True, type_names=type_names,
                 limits=limits or Limits(), fns=catalog_fns, approvals=approvals)
        try:
            await db.open_cache()
            await db.approvals.count()  # requests a stopped server left pending
        except BaseException:
            await db.close()
            raise
        return db

    async def open_cache(self, catalog: Catalog | None = None) -> None:
        """Open the kept tables' store of a sidecar database (the main one by default),
        sweeping what dead servers of this name left there."""
        catalog = catalog or self.catalog
        if catalog.database in self.kept.stores:
            return
        store = await CacheStore.open(catalog.sidecar, catalog.database, catalog.schemas,
                                      catalog.instance, catalog.agent_user)
        self.kept.stores[catalog.database] = store
        # A sidecar that restarts empties UNLOGGED tables: its kept calls are forgotten,
        # and the store opened again.
        store.on_lost = lambda: self.kept.lost(catalog.database, lambda: self.open_cache(catalog))
        await store.sweep()

    def session(self, *, writes: bool | None = None) -> Session:
        """A session that sees every resource."""
        return Session(self, self.main, Policy(writes=self.writes if writes is None else writes))

    async def open_session(self, policy: Policy) -> Session:
        """A session under a role's policy: its writes, visible resources and limits."""
        return Session(self, await self.view(policy.visible(self.resources)), policy)

    @property
    def default_session(self) -> Session:
        if self._default is None:
            self._default = self.session()
        return self._default

    async def execute(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        return await self.default_session.execute(sql, params)

    async def explain(self, sql: str, params: Sequence[Any] | None = None) -> Result:
        return await self.default_session.explain(sql, params)

    def preview(self) -> list[StagedWrite]:
        return self.default_session.preview()

    async def not_ready(self) -> str | None:
        """Why a statement could not be answered now, in one line; None when it could:
        the sidecar answers on the main view's pool, and the served schema is there."""
        served = self.schemas.served
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                async with self.main.pool.acquire() as conn:
                    out = await conn.pipeline([Step(
                        "SELECT to_regnamespace($1) IS NOT NULL", [encode_param(served)])])
        except (OSError, TimeoutError, errors.SqlError) as exc:
            return f"the sidecar does not answer ({type(exc).__name__}: {exc})"[:300]
        if out[-1].rows[0].values[0] != b"t":
            return f"the catalog is not installed (no schema {served})"
        return None

    def lasting_call(self, key: Any) -> asyncio.Future[Any] | None:
        """A lasting call's future in memory, by (resource, identity): None when there is
        none, its ttl is over (it is forgotten) or it failed. One found becomes the most
        recently used, the last to go."""
        fut = self.immutable.get(key)
        if fut is None:
            return None
        if self.kept.stale(key):
            del self.immutable[key]
            return None
        if fut.done() and (fut.cancelled() or fut.exception() is not None):
            return None
        return fut

    def invalidate(self, resource: str) -> None:
        """Forget a resource's kept calls: a write went through it."""
        for key in [k for k in self.immutable if k[0] == resource]:
            del self.immutable[key]
        self.kept.invalidate(resource)

    async def prune(self, days: float) -> tuple[int, int]:
        """Forget the audit's calls and the journal's final transactions older than
        ``days``: how many rows of each went."""
        return await self.audit.prune(days), await self.journal.prune(days)

    async def _retain(self, days: float) -> None:
        """``prune`` now, then every ``RETENTION_POLL`` seconds, until cancelled."""
        while True:
            try:
                calls, writes = await self.prune(days)
                if calls or writes:
                    log.info("retention: forgot %d calls and %d journal rows older than "
                             "%g days", calls, writes, days)
            except Exception:
                log.warning("retention: could not prune the audit and the journal",
                            exc_info=True)
            await asyncio.sleep(RETENTION_POLL)

    async def _settle_lost(self) -> None:
        """What servers of this name that are gone left firing, made ``in doubt``: now,
        then every ``LOST_POLL`` seconds, until cancelled."""
        while True:
            try:
                await self.journal.settle_lost()
            except Exception:
                log.info("could not look for the writes of stopped servers", exc_info=True)
            await asyncio.sleep(LOST_POLL)

    async def close(self) -> None:
        await self.kept.close()  # drops this server's kept tables
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        await self.audit.close()
        self.guard.close()
        for view in self._views.values():
            await view.pool.close()
        for catalog in self._view_catalogs:
            await catalog.close()
        if self._owns_catalog:
            await self.catalog.close()

    async def __aenter__(self) -> Database:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
