"""Claiming a server name's schemas in a sidecar database, for as long as a server runs.

Servers with the same name and the same resources share the shell tables;
a server with the same name and other resources is refused while any of them
runs, unless told to take over. Nothing here touches an object that the
registry does not say this name made.

Rules:
- Installs of one name in one database are serialized by a session-level
  advisory lock (``INSTALL_LOCK``, the name's hash), taken on the claim
  connection, which the Catalog keeps open for its life.
- Every running server holds ``LIVE_LOCK`` shared on that connection; it takes
  it before it lets go of the install lock. So a server that gets
  ``LIVE_LOCK`` exclusively knows that no server of its name is running.
- The registry (``<private>.built``) says what was built: a fingerprint of the
  DDL, the resources, and every table and function made, so that a rebuild
  drops exactly those, one by one, never with CASCADE.
- A served schema that exists with no registry row was not made by us: in a
  database the server did not create, that is a refusal, never a DROP.
- Every install registers an instance (``<private>.instances``): its number
  tells apart the sessions and journal rows of servers sharing a name. Once
  listening, a server records there where a CancelRequest reaches it
  (``advertise``), so another server of the name can hand one over
  (``cancel_addresses``).
- Every running server also holds ``INSTANCE_LOCK`` shared on its name and
  instance number, on the same connection, from its registration on: a free
  one means that instance is gone (``instance_key`` names it, in Python and in
  SQL alike), so another server may settle what it left firing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from glove_scratchpad.names import Schemas, quote_ident

__all__ = ["INSTALL_LOCK", "INSTANCE_LOCK", "LIVE_LOCK", "Built", "NameInUse", "NotOurs",
           "advertise", "build", "cancel_addresses", "claim", "hold_instance", "instance_key",
           "none_running"]

log = logging.getLogger(__name__)

# Advisory lock classes (the first int4 of the pair; the second is hashtext(name)).
# Decimal literals: hex integer literals need Postgres 16.
INSTALL_LOCK = 1735159670  # "glov"
LIVE_LOCK = 1735159671
INSTANCE_LOCK = 1735159673  # (1735159672 is the kept tables' CACHE_LOCK)


class NameInUse(RuntimeError):
    """Another running server has this name with other resources."""


class NotOurs(RuntimeError):
    """A schema this name would use exists, and no server of this name made it."""


@dataclass(frozen=True, slots=True)
class Built:
    """What the registry says a server of this name built."""

    fingerprint: str
    resources: tuple[str, ...]
    tables: tuple[str, ...]  # qualified, quoted
    functions: tuple[str, ...]  # regprocedure text


def fingerprint(ddl: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(ddl).encode()).hexdigest()


async def lock(conn: asyncpg.Connection, name: str) -> None:
    await conn.execute("SELECT pg_advisory_lock($1, hashtext($2))", INSTALL_LOCK, name)


async def unlock(conn: asyncpg.Connection, name: str) -> None:
    await conn.execute("SELECT pg_advisory_unlock($1, hashtext($2))", INSTALL_LOCK, name)


async def hold_live(conn: asyncpg.Connection, name: str) -> None:
    await conn.execute("SELECT pg_advisory_lock_shared($1, hashtext($2))", LIVE_LOCK, name)


def instance_key(name: str, instance: int | str) -> str:
    """What ``INSTANCE_LOCK``'s second int4 hashes: the name and the instance number (the
    SQL ``name || '/' || instance`` spells the same text). Two that hash alike only make a
    dead instance look alive, never a live one dead: the lock is held shared."""
    return f"{name}/{instance}"


async def hold_instance(conn: asyncpg.Connection, name: str, instance: int) -> None:
    await conn.execute("SELECT pg_advisory_lock_shared($1, hashtext($2))", INSTANCE_LOCK,
                       instance_key(name, instance))


async def none_running(conn: asyncpg.Connection, name: str) -> bool:
    """No server of this name runs (the caller holds the install lock, so none starts)."""
    free = await conn.fetchval("SELECT pg_try_advisory_lock($1, hashtext($2))",
                               LIVE_LOCK, name)
    if free:
        await conn.execute("SELECT pg_advisory_unlock($1, hashtext($2))", LIVE_LOCK, name)
    return bool(free)


async def _registry(conn: asyncpg.Connection, s: Schemas) -> Built | None:
    p = quote_ident(s.private)
    await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {p}")
    await conn.execute(
        f"CREATE TABLE IF NOT EXISTS {p}.built (fingerprint text NOT NULL, resources text[],"
        " tables text[], functions text[], built_at timestamptz DEFAULT now())")
    await conn.execute(
        f"CREATE TABLE IF NOT EXISTS {p}.instances (id serial PRIMARY KEY, host text, pid int,"
        " fingerprint text, started_at timestamptz DEFAULT now())")
    await conn.execute(f"ALTER TABLE {p}.instances ADD COLUMN IF NOT EXISTS cancel_at text")
    row = await conn.fetchrow(f"SELECT * FROM {p}.built")
    if row is None:
        return None
    return Built(row["fingerprint"], tuple(row["resources"] or ()), tuple(row["tables"] or ()),
                 tuple(row["functions"] or ()))


async def _existing(conn: asyncpg.Connection, s: Schemas) -> list[str]:
    rows = await conn.fetch("SELECT nspname FROM pg_namespace WHERE nspname = ANY($1::text[])",
                            list(s.owned))
    return sorted(r[0] for r in rows)


def _clash_message(s: Schemas, database: str, built: Built, resources: Sequence[str]) -> str:
    added = sorted(set(resources) - set(built.resources))
    removed = sorted(set(built.resources) - set(resources))
    changed = [] if added or removed else ["the same names, other columns or functions"]
    parts = [f"added: {', '.join(added)}" if added else "",
             f"missing: {', '.join(removed)}" if removed else "", *changed]
    return (f"a server named {s.name!r} is running on database {database!r} with other "
            f"resources ({'; '.join(p for p in parts if p)}). Servers with one name share their "
            "tables, so this one is refused: start it with its own --name, or with --take-over "
            "to replace the running servers' tables.")


async def claim(conn: asyncpg.Connection, s: Schemas, database: str, ddl: Sequence[str],
                resources: Sequence[str], *, take_over: bool, adopt: bool) -> bool:
    """Check that this name's schemas may hold ``ddl``; True when it must be built.

    ``adopt``: the database is the server's own (it created it), so a schema
    left by an older version without a registry is ours to replace.
    """
    built = await _registry(conn, s)
    if built is None:
        strangers = await _existing(conn, s)
        if strangers and not adopt:
            raise NotOurs(
                f"schema {', '.join(strangers)} already exists in database {database!r} and "
                f"was not made by a glove-scratchpad server named {s.name!r} (or was made by a "
                "version before server names); it is left as it is. Start the server with "
                "another --name, or drop that schema yourself.")
        for schema in strangers:  # an older version's, in a database the server made
            log.info("replacing schema %s, left by an older version", schema)
            await conn.execute(f"DROP SCHEMA {quote_ident(schema)} CASCADE")
        return True
    if built.fingerprint == fingerprint(ddl):
        return False
    if not take_over and not await none_running(conn, s.name):
        raise NameInUse(_clash_message(s, database, built, resources))
    if take_over:
        log.warning("taking over the server name %r on database %r", s.name, database)
    return True


async def build(conn: asyncpg.Connection, s: Schemas, ddl: Sequence[str],
                resources: Sequence[str]) -> None:
    """Drop what the registry says this name made, then run ``ddl`` and record it."""
    p = quote_ident(s.private)
    built = await _registry(conn, s)
    if built is not None:
        for fn in built.functions:
            await conn.execute(f"DROP FUNCTION IF EXISTS {fn}")
        for table in built.tables:
            await conn.execute(f"DROP TABLE IF EXISTS {table}")
    for schema in s.owned:
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
    for sql in ddl:
        await conn.execute(sql)
    tables = await conn.fetch(
        "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n"
        " ON n.oid = c.relnamespace WHERE n.nspname = ANY($1::text[]) AND c.relkind = 'r'",
        [s.served, s.system])
    functions = await conn.fetch(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n"
        " ON n.oid = p.pronamespace WHERE n.nspname = $1", s.fns)
    await conn.execute(f"DELETE FROM {p}.built")
    await conn.execute(
        f"INSERT INTO {p}.built (fingerprint, resources, tables, functions)"
        " VALUES ($1, $2, $3, $4)", fingerprint(ddl), list(resources),
        [r[0] for r in tables], [r[0] for r in functions])


async def register(conn: asyncpg.Connection, s: Schemas, ddl: Sequence[str]) -> int:
    """This server's instance number among those of its name in this database."""
    return int(await conn.fetchval(
        f"INSERT INTO {quote_ident(s.private)}.instances (host, pid, fingerprint)"
        " VALUES ($1, $2, $3) RETURNING id", socket.gethostname(), os.getpid(), fingerprint(ddl)))


async def advertise(pool: asyncpg.Pool, s: Schemas, instance: int, address: str | None
                    ) -> None:
    """Record ``address`` (host:port) as where CancelRequests reach ``instance`` (None:
    nowhere any more)."""
    await pool.execute(f"UPDATE {quote_ident(s.private)}.instances SET cancel_at = $1"
                       " WHERE id = $2", address, instance)


async def cancel_addresses(pool: asyncpg.Pool, s: Schemas, low_bits: int, bits: int
                           ) -> list[str]:
    """Where the instances whose number ends in ``low_bits`` (its low ``bits`` bits)
    take CancelRequests, the newest first."""
    rows = await pool.fetch(
        f"SELECT cancel_at FROM {quote_ident(s.private)}.instances WHERE id % $1 = $2"
        " AND cancel_at IS NOT NULL ORDER BY id DESC", 1 << bits, low_bits)
    return [r[0] for r in rows]
