"""Resources made real in the sidecar: shell tables and comments.

Each resource has a shell table in the served schema. Its columns, NOT NULL
keys, primary key and comments are real, so ``information_schema``,
``pg_catalog``, psql's ``\\d+`` and ORM reflection describe resources natively.
Shell tables never hold rows between statements: resolved rows travel with the
statement that reads them, as parameters (``_rows``).

Rules:
- The server creates and changes objects only in the schemas of its name
  (``_names``), and builds them only when no server of its name runs with
  other resources (``_claim``); it never drops what it did not make.
- Statements run as the name's agent role (``_confine``), logged in like the
  sidecar user, with the served schema alone on its search_path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

import asyncpg

from glove_scratchpad.names import (
    DEFAULT_NAME,
    DEFAULT_SCHEMAS,
    INSERT_SCHEMA,
    SERVED_SCHEMA,
    SYSTEM_SCHEMA,
    Schemas,
    agent_role,
    qualified,
    quote_ident,
    quote_literal,
    schema_names,
)
from glove_scratchpad.resources import Fn, Resource

from . import _claim
from ._confine import AgentLogin, confine
from ._fns import fn_ddl
from ._search import search_ddl
from ._sidecar import Sidecar
from ._trips import counted

log = logging.getLogger(__name__)

__all__ = [
    "INSERT_SCHEMA",
    "SERVED_SCHEMA",
    "SYSTEM_SCHEMA",
    "Catalog",
    "NameInUse",
    "NotOurs",
    "qualified",
    "quote_ident",
    "quote_literal",
    "shell_ddl",
]

# Connections for installing resources and other administration; statements
# run on the server's own pooled relay connections.
POOL_MIN, POOL_MAX = 1, 2
# The claim's connection (which holds the name) is checked this often, and when
# lost (the sidecar restarted) opened again, with backoff up to the maximum.
CLAIM_POLL, CLAIM_MAX_DELAY = 0.5, 5.0
_LOST = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)
# Every connection of ours says how it writes string constants, whatever the sidecar's
# default (a Postgres kept for legacy applications may have it off): a backslash in a
# comment is then never the end of a quote.
AS_WRITTEN = {"standard_conforming_strings": "on"}


def table_comment(resource: Resource) -> str:
    about = resource.description.strip()
    parts = [about if about.endswith((".", "!", "?")) else about + "."] if about else []
    parts.append("Verbs: " + ", ".join(resource.verbs) + ".")
    if resource.keys:
        example = " AND ".join(f"{k} = …" for k in resource.keys)
        parts.append(f"Required keys: {', '.join(resource.keys)} (WHERE {example}).")
    parts.append(f"Volatility: {resource.volatility}.")
    return " ".join(parts)


def shell_ddl(resource: Resource, schema: str = SERVED_SCHEMA) -> list[str]:
    """CREATE TABLE and COMMENT statements for one resource's shell table."""
    table = qualified(resource.name, schema)
    if schema == INSERT_SCHEMA:
        cols = [f"{quote_ident(c.name)} {c.pg_type}" for c in resource.columns]
        return [f"CREATE TEMPORARY TABLE {table} (" + ", ".join(cols) + ") ON COMMIT DROP"]
    cols = []
    for col in resource.columns:
        not_null = " NOT NULL" if not col.nullable or col.name in resource.primary_key else ""
        cols.append(f"{quote_ident(col.name)} {col.pg_type}{not_null}")
    if resource.primary_key:
        cols.append("PRIMARY KEY (" + ", ".join(map(quote_ident, resource.primary_key)) + ")")
    out = [f"CREATE TABLE {table} (" + ", ".join(cols) + ")"]
    out.append(f"COMMENT ON TABLE {table} IS {quote_literal(table_comment(resource))}")
    for col in resource.columns:
        text = col.description
        if col.name in resource.keys and not text.lower().startswith("required key"):
            text = ("Required key. " + text).strip()  # unless it says so already
        if text:
            out.append(
                f"COMMENT ON COLUMN {table}.{quote_ident(col.name)} IS {quote_literal(text)}"
            )
    return out


NameInUse = _claim.NameInUse
NotOurs = _claim.NotOurs


async def _connect(sidecar: Sidecar, database: str) -> asyncpg.Connection:
    """A connection of the catalog's own (its round trips count as ``other``)."""
    conn = await asyncpg.connect(host=sidecar.host, port=sidecar.port, user=sidecar.user,
                                 password=sidecar.password, database=database,
                                 server_settings={"application_name": "glove-scratchpad",
                                                  **AS_WRITTEN})
    return counted(conn, "other")


async def _ensure_database(sidecar: Sidecar, database: str) -> None:
    conn = await _connect(sidecar, "postgres")
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await conn.execute(f"CREATE DATABASE {quote_ident(database)}")
    except asyncpg.DuplicateDatabaseError:
        pass
    except asyncpg.InsufficientPrivilegeError as exc:
        raise PermissionError(
            f"the sidecar user {sidecar.user} may not create database {database!r} ({exc}): "
            "roles whose users see only some resources each need a database of their own, so "
            "give that user CREATEDB, or serve every user the same resources") from None
    finally:
        await conn.close()


def install_ddl(schemas: Schemas, resources: Iterable[Resource], system: Iterable[Resource],
                fns: Iterable[Fn]) -> list[str]:
    """Every statement that builds a name's shell tables and functions, in order."""
    resources, system, fns = list(resources), list(system), list(fns)
    ddl = [sql for r in resources for sql in shell_ddl(r, schemas.served)]
    ddl += [sql for r in system for sql in shell_ddl(r, schemas.system)]
    ddl.append(f"COMMENT ON SCHEMA {quote_ident(schemas.fns)} IS " + quote_literal(
        f"Functions: call {schemas.fns}.<name>(args jsonb) or {schemas.fns}.<name>(x => …); "
        f"each returns jsonb. \\df+ {schemas.fns}.* lists them."))
    ddl += [sql for fn in fns for sql in fn_ddl(fn, schemas.fns)]
    ddl += search_ddl(schemas, resources, system, fns)
    return ddl


class Catalog:
    """The sidecar's database as the server sees it: a pool, and the installed shells."""

    def __init__(self, sidecar: Sidecar, pool: asyncpg.Pool, database: str, *,
                 owns_sidecar: bool, schemas: Schemas = DEFAULT_SCHEMAS,
                 claim: asyncpg.Connection | None = None, hardened: bool = False,
                 home: str | None = None) -> None:
        self.sidecar = sidecar
        self.pool = pool
        self.database = database
        self.owns_sidecar = owns_sidecar
        self.schemas = schemas
        self.hardened = hardened  # the server created this database: it may close it
        self.home = home or database  # the database whose role and password it uses
        self.agent_user = sidecar.user  # until install() confines statements to a role
        self.login = AgentLogin(sidecar.user, sidecar.password)
        self.instance = 0  # this server's number among those of its name, after install()
        self._claim = claim

    @classmethod
    async def open(
        cls, sidecar: Sidecar, database: str | None = None, *, owns_sidecar: bool = True,
        name: str = DEFAULT_NAME, home: str | None = None,
    ) -> Catalog:
        """Connect to the sidecar (starting it if needed); ``database`` is created if missing.

        ``owns_sidecar``: whether ``close()`` stops the sidecar too. ``name``: the
        server's name, whose schemas it uses. ``home``: for a role's view database,
        the server's main database (whose agent role it shares).
        """
        schemas = schema_names(name)
        await sidecar.start()
        database = database or sidecar.database
        hardened = sidecar.owns_cluster or database != sidecar.database
        if hardened:
            await _ensure_database(sidecar, database)
        pool = await asyncpg.create_pool(
            host=sidecar.host,
            port=sidecar.port,
            user=sidecar.user,
            password=sidecar.password,
            database=database,
            min_size=POOL_MIN,
            max_size=POOL_MAX,
            server_settings={"application_name": "glove-scratchpad",
                             "search_path": quote_ident(schemas.served), **AS_WRITTEN},
        )
        try:
            claim = await _connect(sidecar, database)
        except BaseException:
            await pool.close()
            raise
        return cls(sidecar, pool, database, owns_sidecar=owns_sidecar, schemas=schemas,
                   claim=claim, hardened=hardened, home=home)

    async def install(self, resources: Iterable[Resource], system: Iterable[Resource] = (),
                      fns: Iterable[Fn] = (), *, take_over: bool = False,
                      login: AgentLogin | None = None, private_ddl: Iterable[str] = (),
                      when_alone: Iterable[str] = ()) -> None:
        """Build (or find built) this name's shell tables and functions, confine the agent
        role to them, and hold the name for as long as this catalog is open.

        Refused (``NameInUse``) while a server of this name runs with other resources,
        unless ``take_over``; refused (``NotOurs``) when one of the name's schemas exists
        and was not made by a server of this name. ``private_ddl`` (the audit's and the
        journal's ``CREATE … IF NOT EXISTS``) runs under the same lock, after the build;
        ``when_alone`` (the journal's recovery) too, but only when no other server of this
        name runs: what a running server is firing is not in doubt.
        """
        resources, system = list(resources), list(system)
        s = self.schemas
        ddl = install_ddl(s, resources, system, fns)
        names = [r.name for r in resources]
        conn = self._claim
        assert conn is not None, "install() on a closed catalog"
        await _claim.lock(conn, s.name)
        try:
            async with conn.transaction():
                if await _claim.claim(conn, s, self.database, ddl, names, take_over=take_over,
                                      adopt=self.hardened):
                    await _claim.build(conn, s, ddl, names)
                self.instance = await _claim.register(conn, s, ddl)
                # Before anything of this instance is journaled: its lock free would say
                # it is gone.
                await _claim.hold_instance(conn, s.name, self.instance)
                for sql in private_ddl:
                    await conn.execute(sql)
                if await _claim.none_running(conn, s.name):
                    for sql in when_alone:
                        await conn.execute(sql)
            self.login = await confine(conn, s, self.database, agent_role(s.name, self.home),
                                       sidecar_user=self.sidecar.user, hardened=self.hardened,
                                       login=login)
            if self.login.user == self.sidecar.user:  # statements log in as the DSN does
                self.login = AgentLogin(self.sidecar.user, self.sidecar.password)
            self.agent_user = self.login.user
            await _claim.hold_live(conn, s.name)
        finally:
            await _claim.unlock(conn, s.name)

    @property
    def agent_sidecar(self) -> Sidecar:
        """Where statements log in: the sidecar, as the agent role, on the served schema."""
        sc = self.sidecar
        return Sidecar(dsn=sc.dsn, host=sc.host, port=sc.port, user=self.login.user,
                       password=self.login.password, database=self.database,
                       parameters={"search_path": quote_ident(self.schemas.served)})

    async def advertise(self, address: str | None) -> None:
        """Record where CancelRequests reach this server (host:port; None: nowhere), for
        the others of its name."""
        await _claim.advertise(counted(self.pool, "other"), self.schemas, self.instance,
                               address)

    async def cancel_addresses(self, low_bits: int, bits: int) -> list[str]:
        """Where the servers of this name whose instance number ends in ``low_bits``
        (its low ``bits`` bits) take CancelRequests."""
        return await _claim.cancel_addresses(counted(self.pool, "other"), self.schemas,
                                             low_bits, bits)

    async def type_names(self) -> dict[int, str]:
        """Every type's SQL name by OID, as format_type() spells it."""
        rows = await counted(self.pool, "other").fetch(
            "SELECT oid::int, format_type(oid, NULL) FROM pg_type")
        return {oid: name for oid, name in rows}

    async def hold_claim(self, poll: float = CLAIM_POLL) -> None:
        """Hold the name again whenever the claim's connection is lost (a sidecar
        restarted, a network gone): a new connection takes the same shared lock,
        retried with backoff while the sidecar is down. Runs until cancelled.
        (The asyncpg pool replaces its closed connections by itself.)"""
        delay = poll
        while True:
            await asyncio.sleep(delay)
            claim = self._claim
            if claim is None or not claim.is_closed():
                delay = poll
                continue
            try:
                conn = await asyncio.wait_for(_connect(self.sidecar, self.database), 10)
                await _claim.hold_live(conn, self.schemas.name)
                if self.instance:  # alive, its firing writes are still its own
                    await _claim.hold_instance(conn, self.schemas.name, self.instance)
            except _LOST as exc:
                log.info("the sidecar cannot be reached to hold the name again (%s)", exc)
                delay = min(delay * 2, CLAIM_MAX_DELAY)
                continue
            if self._claim is claim:
                self._claim = conn
                log.warning("reconnected to the sidecar: holding the name %r again",
                            self.schemas.name)
            else:  # closed meanwhile
                await conn.close()
            delay = poll

    async def close(self) -> None:
        claim, self._claim = self._claim, None
        if claim is not None:  # lets go of the name
            with contextlib.suppress(Exception):
                await claim.close()
        await self.pool.close()
        if self.owns_sidecar:
            await self.sidecar.stop()
