"""Kept calls in the sidecar: one UNLOGGED table per kept call, in a schema of the server's.

A call whose rows last (immutable, or stable with a ttl) is materialized once as
a table that later statements read in place of rows sent with them. This module
is the sidecar's side of that: the schema, the tables, and the registry that
says whose they are. Which calls are kept, for how long, and when they go is the
engine's (``server/engine/cache.py``).

Rules:
- The tables live in ``cache_schema(schemas)`` (``_gs_cache`` for the default
  name, ``_gs_cache_<name>`` otherwise), one per sidecar database the server
  uses; the agent role may USAGE the schema and SELECT each table, nothing else.
- Every table is registered in ``<private>.cache_tables`` with the instance
  that made it before it exists (in the same transaction), and its name carries
  that instance's number: servers of one name sharing a database never touch
  each other's tables.
- A running instance holds the advisory lock ``CACHE_LOCK`` on its name and
  number, on a connection of its own, for its life. At start-up, ``sweep``
  drops the registered tables of every instance whose lock is free (a server
  that died), and nothing that the registry does not name.
- Rows arrive by binary COPY; a column type the driver cannot encode from the
  Python values falls back to the text path that statements use
  (``rows_params``), the failed COPY undone first.
- A spill (``spill``: a large call's rows for one statement, dropped after it)
  takes an empty table made ahead for its columns when there is one, registered
  like any other, and has the next one made in the background: a table's DDL
  costs as much as copying thousands of rows. At most one such table waits per
  set of columns.
- Kept tables are indexed on the primary key, so a point lookup is an index scan
  (never on the required keys alone: a kept table holds one call, whose rows all
  hold its keys' values), and analyzed in the background: the statement
  that made one need not wait for its statistics (the index already gave the
  planner its size). A table that one statement reads and then drops (a large
  call that is not kept) is neither. ``index`` adds an index the engine asks for
  (the columns statements look the table up by), and analyzes the table again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any

import asyncpg

from glove_scratchpad import errors
from glove_scratchpad.background import hold
from glove_scratchpad.names import Schemas
from glove_scratchpad.resources import Resource

from ._access import Access, unreachable
from ._catalog import AS_WRITTEN, qualified, quote_ident, quote_literal
from ._rows import populate_sql, rows_params
from ._sidecar import Sidecar

__all__ = ["CACHE_LOCK", "CacheStore", "cache_schema"]

log = logging.getLogger(__name__)

CACHE_LOCK = 1735159672  # advisory lock class of a live instance's kept tables ("glox")
# Column types whose Python values asyncpg's binary codecs take as pydantic gives them.
_BINARY = frozenset((
    "bigint", "integer", "smallint", "text", "boolean", "double precision", "real",
    "date", "timestamp", "timestamp with time zone", "timestamptz", "time", "uuid",
    "bytea", "interval", "numeric"))
_JSON = frozenset(("json", "jsonb"))
# What servers of one name starting at once may meet making the schema and registry:
# unique_violation, duplicate_object, duplicate_schema, duplicate_table.
_RACED = frozenset(("23505", "42710", "42P06", "42P07"))


def cache_schema(schemas: Schemas) -> str:
    """The schema of a server name's kept tables (next to its private one)."""
    return schemas.private.replace("_gs_audit", "_gs_cache", 1)


class CacheStore:
    """One sidecar database's kept tables, made and dropped on a connection of its own."""

    def __init__(self, conn: asyncpg.Connection, schemas: Schemas, instance: int,
                 agent_user: str | None, owner: str | None = None) -> None:
        self.conn = conn  # its own: closed with the store, watched for a restart
        self._sql = Access(conn, "cache")  # its exchanges (errors as ``errors.*``)
        # A kept call's rows written: its table made, filled and indexed.
        self._populate = Access(conn, "populate")
        self.owner = owner
        self.schemas = schemas
        self.schema = cache_schema(schemas)
        self.instance = instance
        self.agent_user = agent_user
        self.lock = asyncio.Lock()  # one statement at a time on the connection
        self.on_lost: Callable[[], None] | None = None  # the connection went (a restart)
        self.closing = False
        conn.add_termination_listener(self._terminated)
        self._registry = f"{quote_ident(schemas.private)}.cache_tables"
        self._tasks: set[asyncio.Task[None]] = set()  # analyzing, and spill tables ahead
        self._spills = itertools.count(1)
        self._ready: dict[str, str] = {}  # a spill table made ahead, by its columns
        self._readying: set[str] = set()

    @classmethod
    async def open(cls, sidecar: Sidecar, database: str, schemas: Schemas, instance: int,
                   agent_user: str | None) -> CacheStore:
        """Connect as the owner, make the schema and registry if missing, hold the lock."""
        conn = await asyncpg.connect(host=sidecar.host, port=sidecar.port, user=sidecar.user,
                                     password=sidecar.password, database=database,
                                     server_settings={"application_name": "glove-cache",
                                                      **AS_WRITTEN,
                                                      # Unlogged tables and their registry
                                                      # rows, one transaction each: none
                                                      # need the WAL on disk to commit.
                                                      "synchronous_commit": "off"})
        store = cls(conn, schemas, instance, agent_user, sidecar.user)
        try:
            await store._setup()
        except BaseException:
            await conn.close()
            raise
        return store

    def _terminated(self, conn: Any) -> None:
        if not self.closing and self.on_lost is not None:
            self.on_lost()

    def _lock_args(self, instance: int) -> tuple[int, str]:
        return CACHE_LOCK, f"{self.schemas.name}/{instance}"

    async def _setup(self) -> None:
        conn, schema = self._sql, quote_ident(self.schema)
        for attempt in range(3):  # servers of one name starting at once race on IF NOT EXISTS
            try:
                async with conn.transaction():
                    await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
                    await conn.execute(
                        f"CREATE TABLE IF NOT EXISTS {self._registry} (name text PRIMARY KEY,"
                        " instance int NOT NULL, made_at timestamptz NOT NULL DEFAULT now())")
                    if self.agent_user and self.agent_user != self.owner:
                        await conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO "
                                           f"{quote_ident(self.agent_user)}")
                break
            except errors.SqlError as exc:
                if exc.sqlstate not in _RACED or attempt == 2:
                    raise
        await conn.execute("SELECT pg_advisory_lock($1, hashtext($2))",
                           *self._lock_args(self.instance))

    async def sweep(self) -> list[str]:
        """Drop the tables of instances that are not running; the names dropped."""
        async with self.lock:
            rows = await self._sql.fetch(
                f"SELECT instance, array_agg(name) AS names FROM {self._registry}"
                " WHERE instance <> $1 GROUP BY instance", self.instance)
            dropped: list[str] = []
            for row in rows:
                args = self._lock_args(row["instance"])
                if not await self._sql.fetchval(
                        "SELECT pg_try_advisory_lock($1, hashtext($2))", *args):
                    continue  # that server runs: its tables are its own
                try:
                    await self._drop(row["names"])
                    dropped += row["names"]
                finally:
                    await self._sql.execute("SELECT pg_advisory_unlock($1, hashtext($2))",
                                            *args)
            return dropped

    def table_name(self, digest: str, generation: int) -> str:
        return f"c{self.instance}_{digest}_{generation}"

    def qualified(self, name: str) -> str:
        return qualified(name, self.schema)

    async def make(self, name: str, resource: Resource, rows: Sequence[dict[str, Any]],
                   *, lasting: bool = True) -> int:
        """Materialize rows as table ``name``; its size in bytes (0 for a table that is
        not ``lasting``: read by one statement, then dropped, it is neither indexed nor
        analyzed, nor counted against ``cache_bytes``)."""
        table = self.qualified(name)
        conn = self._populate
        size = 0
        async with self.lock, conn.transaction():
            await conn.execute(self._create_sql(name, _columns_sql(resource)))
            await self._fill(table, name, resource, rows)
            if lasting:
                if resource.primary_key:
                    await conn.execute(f"CREATE INDEX ON {table} "
                                       f"({', '.join(map(quote_ident, resource.primary_key))})")
                size = int(await conn.fetchval("SELECT pg_total_relation_size($1::regclass)",
                                               table))
        if lasting:  # statistics for the statements after the first, which need not wait
            hold(self._analyze(table), self._tasks)
        return size

    async def spill(self, resource: Resource, rows: Sequence[dict[str, Any]]) -> str:
        """Rows copied into a table that one statement reads (``drop`` it after); its
        name. The table was made ahead, after the last spill of the same columns, when
        there is one: its DDL is not on the statement's way. The next one is made in
        the background."""
        columns = _columns_sql(resource)
        name = self._ready.pop(columns, None)
        if name is None:
            name = self._spill_name()
            await self.make(name, resource, rows, lasting=False)  # all or nothing
        else:
            try:
                async with self.lock:
                    await self._fill(self.qualified(name), name, resource, rows)
            except BaseException:
                hold(self.drop([name]), self._tasks)  # empty: its rows went in whole or not
                raise
        if not (self.closing or columns in self._ready or columns in self._readying):
            self._readying.add(columns)
            hold(self._make_ahead(columns), self._tasks)
        return name

    def _spill_name(self) -> str:
        return f"c{self.instance}_spill_{next(self._spills)}"

    def _create_sql(self, name: str, columns: str) -> str:
        """The registry's row and the table (and the agent's grant), in one round trip: a
        simple query, one transaction when not in one already."""
        table = self.qualified(name)
        sql = (f"INSERT INTO {self._registry} (name, instance) VALUES "
               f"({quote_literal(name)}, {int(self.instance)}); "
               f"CREATE UNLOGGED TABLE {table} ({columns})")
        if self.agent_user and self.agent_user != self.owner:
            sql += f"; GRANT SELECT ON {table} TO {quote_ident(self.agent_user)}"
        return sql

    async def _make_ahead(self, columns: str) -> None:
        try:
            name = self._spill_name()
            async with self.lock:
                if self.closing:
                    return
                await self._sql.execute(self._create_sql(name, columns))
            self._ready[columns] = name
        except errors.SqlError as exc:
            log.info("no spill table made ahead: %s", exc)  # the next spill makes its own
        finally:
            self._readying.discard(columns)


    async def index(self, name: str, columns: Sequence[str]) -> int:
        """An index on kept table ``name``'s ``columns``, and its statistics made again;
        the table's size in bytes after."""
        table = self.qualified(name)
        async with self.lock:
            await self._sql.execute(
                f"CREATE INDEX ON {table} ({', '.join(map(quote_ident, columns))})")
            await self._sql.execute(f"ANALYZE {table}")
            return int(await self._sql.fetchval("SELECT pg_total_relation_size($1::regclass)",
                                                table))

    async def _analyze(self, table: str) -> None:
        try:
            async with self.lock:
                await self._sql.execute(f"ANALYZE {table}")
        except errors.SqlError as exc:
            if not (isinstance(exc, errors.UndefinedTable) or unreachable(exc)):
                raise  # else: dropped already, or the store is closing

    async def _fill(self, table: str, name: str, resource: Resource,
                    rows: Sequence[dict[str, Any]]) -> None:
        conn = self._populate
        types = [c.pg_type.lower() for c in resource.columns]
        if all(t in _BINARY or t in _JSON for t in types):
            names = resource.column_names
            records: Iterable[tuple[Any, ...]]
            jsons = [i for i, t in enumerate(types) if t in _JSON]
            if jsons:
                records = (_json_record(row, names, jsons) for row in rows)
            else:  # validated rows have every column
                getter = itemgetter(*names)
                records = map(getter, rows) if len(names) > 1 else zip(map(getter, rows))
            try:
                async with conn.transaction():  # a savepoint: the text path may follow
                    await conn.copy_records_to_table(name, records=records, columns=names,
                                                     schema_name=self.schema)
                return
            except (errors.SqlError, TypeError, ValueError, OverflowError, KeyError) as exc:
                if isinstance(exc, errors.SqlError) and exc.sqlstate[:2] != "22":
                    raise  # not a value the binary path refused
                log.debug("binary COPY into %s failed (%s): the text path", table, exc)
        params = rows_params(resource, rows)
        await conn.execute(f"INSERT INTO {table} SELECT * FROM "
                           f"{populate_sql(resource, 1, self.schemas.served)}", *params)

    async def drop(self, names: Sequence[str]) -> None:
        if names:
            async with self.lock:
                await self._drop(names)

    async def _drop(self, names: Sequence[str]) -> None:
        # One round trip: a simple query's statements are one transaction.
        await self._sql.execute(
            f"DROP TABLE IF EXISTS {', '.join(map(self.qualified, names))}; "
            f"DELETE FROM {self._registry} WHERE name IN ({', '.join(map(quote_literal, names))})")

    async def close(self) -> None:
        """Drop every table of this instance and let go of its lock."""
        self.closing = True
        for task in list(self._tasks):
            task.cancel()
        if self.conn.is_closed():
            return
        try:
            async with self.lock:
                names = await self._sql.fetchval(
                    f"SELECT array_agg(name) FROM {self._registry} WHERE instance = $1",
                    self.instance)
                if names:
                    await self._drop(names)
        except errors.SqlError as exc:
            log.warning("kept tables of instance %s not dropped: %s", self.instance, exc)
        finally:
            await self.conn.close()


def _columns_sql(resource: Resource) -> str:
    return ", ".join(f"{quote_ident(c.name)} {c.pg_type}" for c in resource.columns)


def _json_record(row: dict[str, Any], names: Sequence[str], jsons: Sequence[int]
                 ) -> tuple[Any, ...]:
    values = list(map(row.get, names))
    for i in jsons:
        if values[i] is not None:
            values[i] = json.dumps(values[i], default=str)
    return tuple(values)
