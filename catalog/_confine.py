"""Layer 2: the least-privilege role every client statement runs as in the sidecar.

Rules:
- The role is made only if the sidecar user may create roles; otherwise
  statements run as that user, and the server says so once.
- The role logs in the way the sidecar user does (same host and port), with a
  password the server sets and keeps in its private schema, so it works where
  every TCP login must use scram-sha-256. Servers sharing a name and database
  share the role and read the same password.
- It may use its name's served, system and function schemas and make temporary
  tables; it never sees the private schema (audit, journal, the password).
- Changes outside the name's own schemas (revoking from PUBLIC what every role
  may run, closing the database to PUBLIC) are made only in a database the
  server created itself. In a database it was given, they would change it for
  every other user: the server says so once and leaves them to the gate.
- The role's statements are bounded where Postgres can bound them: time
  (``statement_timeout``), memory per sort or hash (``work_mem``,
  ``hash_mem_multiplier``), spill to disk (``temp_file_limit``) and recursion
  (``max_stack_depth``). A cap only a superuser may set (``temp_file_limit``) is
  set where it can be; where it cannot, the server says so once and relies on the
  statement timeout (``max_stack_depth`` then stays the cluster's).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import logging
import os
import secrets
from dataclasses import dataclass

import asyncpg

from glove_scratchpad.names import Schemas, quote_ident

__all__ = ["AgentLogin", "confine"]

log = logging.getLogger(__name__)

AGENT_STATEMENT_TIMEOUT = "300s"  # the sidecar's own backstop; the server's is finer
AGENT_TEMP_FILE_LIMIT = "1GB"  # spill to disk a sort or hash may make
AGENT_IDLE_TIMEOUT = "60s"  # idle_in_transaction_session_timeout
# Memory one sort or hash may take before it spills (to temp_file_limit's disk), set on
# the role so that a cluster configured larger does not lift it; Postgres's defaults.
AGENT_WORK_MEM = "4MB"
AGENT_HASH_MEM_MULTIPLIER = "2"
AGENT_MAX_STACK_DEPTH = "2MB"  # superuser-only: where it cannot be set, the cluster's holds
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
_REVOKE_VIEWS = (
    "REVOKE SELECT ON pg_catalog.pg_stat_activity, pg_catalog.pg_locks, "
    "pg_catalog.pg_prepared_statements, pg_catalog.pg_prepared_xacts, "
    "pg_catalog.pg_cursors, pg_catalog.pg_replication_slots, pg_catalog.pg_stats, "
    "pg_catalog.pg_sequences, pg_catalog.pg_db_role_setting, "
    "pg_catalog.pg_user_mappings, pg_catalog.pg_largeobject_metadata FROM PUBLIC")

_said: set[str] = set()


def say_once(message: str, *args: object) -> None:
    """A warning about the sidecar's privileges, logged once per process."""
    text = message % args if args else message
    if text not in _said:
        _said.add(text)
        log.warning("%s", text)


@dataclass(frozen=True, slots=True)
class AgentLogin:
    """How statements log in: the role, and its password (None: as the sidecar user)."""

    user: str
    password: str | None
    unset: tuple[str, ...] = ()  # caps the sidecar user may not set (said once at start)


def scram_verifier(password: str, iterations: int = 4096) -> str:
    """A SCRAM-SHA-256 verifier, so the password itself never travels in a statement."""
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    stored = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    server = hmac.new(salted, b"Server Key", "sha256").digest()
    b64 = base64.b64encode
    return (f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}"
            f"${b64(stored).decode()}:{b64(server).decode()}")


async def _password(conn: asyncpg.Connection, s: Schemas, role: str) -> str:
    """The role's password, kept in the private schema; made by the first server."""
    table = f"{quote_ident(s.private)}.agent_login"
    await conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (role text PRIMARY KEY, "
                       "password text NOT NULL)")
    await conn.execute(f"REVOKE ALL ON {table} FROM PUBLIC")
    found = await conn.fetchval(f"SELECT password FROM {table} WHERE role = $1", role)
    if found is None:
        found = secrets.token_urlsafe(24)
        await conn.execute(f"INSERT INTO {table} VALUES ($1, $2)", role, found)
    return str(found)


async def _try(conn: asyncpg.Connection, sql: str) -> asyncpg.PostgresError | None:
    try:
        async with conn.transaction():
            await conn.execute(sql)
    except (asyncpg.InsufficientPrivilegeError, asyncpg.ObjectNotInPrerequisiteStateError,
            asyncpg.FeatureNotSupportedError) as exc:
        return exc
    return None


async def confine(conn: asyncpg.Connection, s: Schemas, database: str, role: str, *,
                  sidecar_user: str, hardened: bool, login: AgentLogin | None = None
                  ) -> AgentLogin:
    """Make (or find) the agent role and grant it this name's schemas in ``database``.

    ``login``: the role and password already made in the server's main database
    (a role's view database reuses them). ``hardened``: the server created this
    database, so it may also close it to PUBLIC.
    """
    if login is None:
        if not await conn.fetchval("SELECT rolsuper OR rolcreaterole FROM pg_roles "
                                   "WHERE rolname = current_user"):
            say_once("the sidecar user %s may not create roles: statements run as %s, and the "
                     "sidecar's layer of the sandbox is only as narrow as its privileges",
                     sidecar_user, sidecar_user)
            return AgentLogin(sidecar_user, None)
        password = await _password(conn, s, role)
        if not await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role):
            with contextlib.suppress(asyncpg.DuplicateObjectError):  # another server's race
                await conn.execute(f"CREATE ROLE {quote_ident(role)} LOGIN NOSUPERUSER NOCREATEDB "
                                   "NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS")
        await conn.execute(f"ALTER ROLE {quote_ident(role)} PASSWORD '{scram_verifier(password)}'")
        for name, value in (("statement_timeout", AGENT_STATEMENT_TIMEOUT),
                            ("idle_in_transaction_session_timeout", AGENT_IDLE_TIMEOUT),
                            ("work_mem", AGENT_WORK_MEM),
                            ("hash_mem_multiplier", AGENT_HASH_MEM_MULTIPLIER)):
            await conn.execute(f"ALTER ROLE {quote_ident(role)} SET {name} = '{value}'")
        # The gate refuses SET max_stack_depth; this keeps a cluster's larger one off too.
        await _try(conn, f"ALTER ROLE {quote_ident(role)} SET max_stack_depth = "
                         f"'{AGENT_MAX_STACK_DEPTH}'")
        denied = await _try(conn, f"ALTER ROLE {quote_ident(role)} SET temp_file_limit = "
                                  f"'{AGENT_TEMP_FILE_LIMIT}'")
        if denied is not None:
            say_once("temp_file_limit is not set for role %s (%s): a superuser may allow it "
                     "with GRANT SET ON PARAMETER temp_file_limit TO %s; until then a "
                     "statement's spill to disk is bounded by its statement timeout (%s)",
                     role, denied, sidecar_user, AGENT_STATEMENT_TIMEOUT)
        login = AgentLogin(role, password, () if denied is None else ("temp_file_limit",))
    role = login.user
    if role == sidecar_user:  # no role of its own: nothing to grant
        return login
    schemas = ", ".join(map(quote_ident, s.owned))
    db = quote_ident(database)
    for sql in (
        f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {quote_ident(role)}",
        f"GRANT USAGE ON SCHEMA {schemas} TO {quote_ident(role)}",
        f"REVOKE ALL ON SCHEMA {quote_ident(s.private)} FROM {quote_ident(role)}",
        f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {quote_ident(s.fns)} TO {quote_ident(role)}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "
        f"{quote_ident(s.served)}, {quote_ident(s.system)} TO {quote_ident(role)}",
    ):
        await conn.execute(sql)
    if hardened:
        for sql in (f"REVOKE ALL ON DATABASE {db} FROM PUBLIC", _REVOKE_VIEWS, _REVOKE_FUNCTIONS):
            await conn.execute(sql)
    else:
        say_once("database %s was given to the server, not made by it: what PUBLIC may run "
                 "there (advisory locks, backend and activity functions) is left as it is, "
                 "and the gate alone refuses those", database)
    return login
