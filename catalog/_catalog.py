"""Resources made real in the sidecar: shell tables and comments.

Each resource has a shell table in the served schema. Its columns, NOT NULL
keys, primary key and comments are real, so ``information_schema``,
``pg_catalog``, psql's ``\\d+`` and ORM reflection describe resources natively.
Shell tables never hold rows between statements: resolved rows travel with the
statement that reads them, as parameters (``_rows``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable

import asyncpg

from glove_scratchpad.resources import Fn, Resource

from ._fns import FN_SCHEMA, fns_ddl
from ._sidecar import Sidecar

log = logging.getLogger(__name__)

__all__ = [
    "INSERT_SCHEMA",
    "SERVED_SCHEMA",
    "SYSTEM_SCHEMA",
    "Catalog",
    "qualified",
    "quote_ident",
    "shell_ddl",
]

# The role every statement runs as in the sidecar (layer 2 of the sandbox).
AGENT_ROLE = "scratchpad_agent"
AGENT_STATEMENT_TIMEOUT = "300s"  # the sidecar's own backstop; the server's is finer
AGENT_TEMP_FILE_LIMIT = "1GB"  # spill to disk a sort or hash may make
# Functions PUBLIC may run by default that would let a statement outlive its
# transaction, see other sessions, or hold locks on a pooled connection.
_REVOKE_FUNCTIONS = """
DO $$ DECLARE f regprocedure; BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'pg_catalog' AND (
             (p.proname LIKE 'pg\\_advisory%' AND p.proname <> 'pg_advisory_unlock_all')
             OR p.proname LIKE 'pg\\_try\\_advisory%'
             OR p.proname LIKE 'lo\\_%' OR p.proname IN ('loread', 'lowrite')
             OR p.proname LIKE 'pg\\_stat\\_get\\_activity%'
             OR p.proname LIKE 'pg\\_stat\\_get\\_backend%'
             OR p.proname LIKE 'txid\\_%' OR p.proname LIKE 'pg\\_current\\_%'
             OR p.proname LIKE 'pg\\_snapshot\\_%' OR p.proname LIKE 'pg\\_control\\_%'
             OR p.proname LIKE 'inet\\_%' OR p.proname LIKE 'pg\\_logical\\_%'
             OR p.proname IN ('pg_backend_pid', 'pg_xact_status', 'pg_show_all_settings',
                              'pg_tablespace_location', 'pg_relation_filepath', 'pg_lock_status',
                              'setseed', 'pg_show_all_file_settings', 'pg_prepared_statement',
                              'pg_cursor', 'pg_prepared_xact', 'pg_get_replication_slots')
             OR p.proname IN ('pg_notify', 'pg_listening_channels', 'pg_cancel_backend',
                              'pg_terminate_backend', 'pg_blocking_pids',
                              'pg_safe_snapshot_blocking_pids', 'pg_stat_reset',
                              'pg_stat_reset_shared'))
  LOOP EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f); END LOOP;
END $$"""
SERVED_SCHEMA = "public"
SYSTEM_SCHEMA = "scratchpad"
# An INSERT computes its rows against an unconstrained temporary twin of the
# shell table, made inside the statement's always rolled-back transaction: ids
# and other values a tool assigns are NULL until the tool runs, so the shell
# table's NOT NULL and PRIMARY KEY must not apply there.
INSERT_SCHEMA = "pg_temp"
# Connections for installing resources and other administration; statements
# run on the server's own pooled relay connections.
POOL_MIN, POOL_MAX = 1, 2


def quote_ident(name: str) -> str:
    """Always quoted, so reserved words (``user``, ``time``) work as names."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def qualified(name: str, schema: str = SERVED_SCHEMA) -> str:
    return f"{quote_ident(schema)}.{quote_ident(name)}"


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
        if col.name in resource.keys:
            text = ("Required key. " + text).strip()
        if text:
            out.append(
                f"COMMENT ON COLUMN {table}.{quote_ident(col.name)} IS {quote_literal(text)}"
            )
    return out


async def _ensure_database(sidecar: Sidecar, database: str) -> None:
    conn = await asyncpg.connect(host=sidecar.host, port=sidecar.port, user=sidecar.user,
                                 password=sidecar.password, database="postgres")
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await conn.execute(f"CREATE DATABASE {quote_ident(database)}")
    except asyncpg.DuplicateDatabaseError:
        pass
    finally:
        await conn.close()


class Catalog:
    """The sidecar's database as the server sees it: a pool, and the installed shells."""

    def __init__(self, sidecar: Sidecar, pool: asyncpg.Pool, database: str, *,
                 owns_sidecar: bool) -> None:
        self.sidecar = sidecar
        self.pool = pool
        self.database = database
        self.owns_sidecar = owns_sidecar
        self.agent_user = sidecar.user  # until install() confines statements to a role

    @classmethod
    async def open(
        cls, sidecar: Sidecar, database: str | None = None, *, owns_sidecar: bool = True
    ) -> Catalog:
        """Connect to the sidecar (starting it if needed); ``database`` is created if missing.

        ``owns_sidecar``: whether ``close()`` stops the sidecar too.
        """
        await sidecar.start()
        database = database or sidecar.database
        if database != sidecar.database or sidecar.owns_cluster:
            await _ensure_database(sidecar, database)
        pool = await asyncpg.create_pool(
            host=sidecar.host,
            port=sidecar.port,
            user=sidecar.user,
            password=sidecar.password,
            database=database,
            min_size=POOL_MIN,
            max_size=POOL_MAX,
            server_settings={"application_name": "glove-scratchpad"},
        )
        return cls(sidecar, pool, database, owns_sidecar=owns_sidecar)

    async def install(self, resources: Iterable[Resource], system: Iterable[Resource] = (),
                      fns: Iterable[Fn] = ()) -> None:
        """Replace the served schemas' shell tables (and functions) with these (one transaction)."""
        async with self.pool.acquire() as conn, conn.transaction():
            # The served schemas belong to the server: they are rebuilt on every start.
            await conn.execute("SELECT pg_advisory_xact_lock(0x676c6f7665)")
            for schema in (SERVED_SCHEMA, SYSTEM_SCHEMA):
                await conn.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
                await conn.execute(f"CREATE SCHEMA {quote_ident(schema)}")
            for resource in resources:
                for sql in shell_ddl(resource):
                    await conn.execute(sql)
            for resource in system:
                for sql in shell_ddl(resource, SYSTEM_SCHEMA):
                    await conn.execute(sql)
            for sql in fns_ddl(fns):
                await conn.execute(sql)
            self.agent_user = await self._confine(conn)

    async def _confine(self, conn: asyncpg.Connection) -> str:
        """Layer 2: the least-privilege role statements run as, if we may create it.

        It can log in to this database, use the shell tables (its writes there
        are always rolled back), make temporary tables, and nothing else: no
        other schema, no sequences, no advisory locks, no other sessions'
        activity; superuser-only settings and file functions stay closed to it.
        """
        if not await conn.fetchval("SELECT rolsuper OR rolcreaterole FROM pg_roles "
                                   "WHERE rolname = current_user"):
            log.warning("the sidecar user may not create roles: statements run as %s",
                        self.sidecar.user)
            return self.sidecar.user
        if not await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", AGENT_ROLE):
            # Another database's install may make it first.
            with contextlib.suppress(asyncpg.DuplicateObjectError):
                await conn.execute(f"CREATE ROLE {AGENT_ROLE} LOGIN NOSUPERUSER NOCREATEDB "
                                   "NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS")
        db = quote_ident(self.database)
        schemas = f"{quote_ident(SERVED_SCHEMA)}, {quote_ident(SYSTEM_SCHEMA)}"
        fn_schema = quote_ident(FN_SCHEMA)
        for sql in (
            f"ALTER ROLE {AGENT_ROLE} SET statement_timeout = '{AGENT_STATEMENT_TIMEOUT}'",
            f"ALTER ROLE {AGENT_ROLE} SET temp_file_limit = '{AGENT_TEMP_FILE_LIMIT}'",
            f"ALTER ROLE {AGENT_ROLE} SET idle_in_transaction_session_timeout = '60s'",
            f"REVOKE ALL ON DATABASE {db} FROM PUBLIC",
            f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {AGENT_ROLE}",
            f"GRANT USAGE ON SCHEMA {schemas}, {fn_schema} TO {AGENT_ROLE}",
            f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {fn_schema} TO {AGENT_ROLE}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schemas} "
            f"TO {AGENT_ROLE}",
            "REVOKE SELECT ON pg_catalog.pg_stat_activity, pg_catalog.pg_locks, "
            "pg_catalog.pg_prepared_statements, pg_catalog.pg_prepared_xacts, "
            "pg_catalog.pg_cursors, pg_catalog.pg_replication_slots, pg_catalog.pg_stats, "
            "pg_catalog.pg_sequences, pg_catalog.pg_db_role_setting, "
            "pg_catalog.pg_user_mappings, pg_catalog.pg_largeobject_metadata FROM PUBLIC",
            _REVOKE_FUNCTIONS,
        ):
            await conn.execute(sql)
        return AGENT_ROLE

    async def type_names(self) -> dict[int, str]:
        """Every type's SQL name by OID, as format_type() spells it."""
        rows = await self.pool.fetch("SELECT oid::int, format_type(oid, NULL) FROM pg_type")
        return {oid: name for oid, name in rows}

    async def close(self) -> None:
        await self.pool.close()
        if self.owns_sidecar:
            await self.sidecar.stop()
