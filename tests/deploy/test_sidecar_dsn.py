"""``--sidecar-dsn`` on Postgres 15 and 18, over TCP with scram-sha-256 and over a Unix
socket: the server works, and it leaves alone every object it did not make."""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest

from glove_scratchpad.catalog import NotOurs
from glove_scratchpad.server import Database

from .. import fix_server
from .fix_postgres import Cluster
from .fix_resources import make

_dbs = itertools.count()


async def _fresh_database(cluster: Cluster, owner: str = "postgres") -> str:
    name = f"app_{next(_dbs)}"
    await cluster.execute(f"CREATE DATABASE {name} OWNER {owner}")
    # What was there before the server: a table of the owner's own in public.
    await cluster.execute(
        "CREATE TABLE public.keepme (id int PRIMARY KEY, v text)",
        "INSERT INTO public.keepme VALUES (1, 'one'), (2, 'two')",
        "CREATE VIEW public.keepview AS SELECT v FROM public.keepme",
        f"ALTER TABLE public.keepme OWNER TO {owner}", database=name)
    return name


async def _public(cluster: Cluster, database: str) -> tuple[list, list]:
    conn = await cluster.connect(database)
    try:
        rows = [tuple(r) for r in await conn.fetch("SELECT * FROM public.keepme ORDER BY id")]
        objects = [tuple(r) for r in await conn.fetch(
            "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON "
            "n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1")]
        return rows, objects
    finally:
        await conn.close()


@asynccontextmanager
async def _serve(dsn: str, **kw: object) -> AsyncIterator[tuple[Database, str]]:
    db = await Database.create(kw.pop("resources", None) or make(), writes=True,
                               sidecar_dsn=dsn, **kw)  # type: ignore[arg-type]
    try:
        async with fix_server.serving(db, writes=True) as server:
            yield db, fix_server.dsn(server)
    finally:
        await db.close()


async def _use(url: str) -> None:
    """Read, write and describe through the wire, as a client would."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute("SELECT text FROM greet WHERE who = 'pg'")
        assert await cur.fetchall() == [("hello pg",)]
        cur = await conn.execute("INSERT INTO notes (title) VALUES ('n') RETURNING id")
        assert (await cur.fetchone())[0] == 2  # type: ignore[index]
        await conn.execute("UPDATE notes SET body = 'b' WHERE title = 'n'")
        cur = await conn.execute("SELECT id, body FROM notes ORDER BY id")
        assert await cur.fetchall() == [(1, ""), (2, "b")]
        cur = await conn.execute("SELECT table_name FROM information_schema.tables "
                                 "WHERE table_schema = current_schema() ORDER BY 1")
        assert await cur.fetchall() == [("greet",), ("notes",), ("slow",)]
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT * FROM public.keepme")


async def test_a_given_database_keeps_its_public_schema(cluster: Cluster):
    database = await _fresh_database(cluster)
    before = await _public(cluster, database)
    dsn = cluster.dsn(database)
    async with _serve(dsn) as (db, url):
        assert db.catalog.agent_user.startswith("glove_agent_")  # logs in over TCP, scram
        assert db.catalog.login.unset == ()
        await _use(url)
        assert await _public(cluster, database) == before
    # Another resource set, taking the name over: a rebuild drops only what it made.
    async with _serve(dsn, resources=make(extra=True), take_over=True) as (db, url):
        assert "more" in db.resources
    assert await _public(cluster, database) == before
    conn = await cluster.connect(database)
    try:
        schemas = {r[0] for r in await conn.fetch("SELECT nspname FROM pg_namespace")}
    finally:
        await conn.close()
    assert {"public", "glove", "scratchpad", "fn", "_gs_audit"} <= schemas


async def test_a_non_superuser_owner_is_enough(cluster: Cluster, caplog):
    """CREATEROLE and one database of its own: the agent role is made, and what only a
    superuser may set is said once at start, not a refusal."""
    owner = f"owner_{next(_dbs)}"
    await cluster.execute(f"CREATE ROLE {owner} LOGIN CREATEROLE PASSWORD 'ownerpw'")
    database = await _fresh_database(cluster, owner)
    before = await _public(cluster, database)
    with caplog.at_level(logging.WARNING, logger="glove_scratchpad.catalog"):
        async with _serve(cluster.dsn(database, owner, "ownerpw")) as (db, url):
            assert db.catalog.agent_user != owner
            assert db.catalog.login.unset == ("temp_file_limit",)
            await _use(url)
        async with _serve(cluster.dsn(database, owner, "ownerpw")) as (db, url):
            await _use(url)
    said = [r.getMessage() for r in caplog.records if "temp_file_limit" in r.getMessage()]
    assert len(said) <= 1  # once a process, however many starts
    assert await _public(cluster, database) == before


async def test_without_createrole_statements_run_as_the_owner(cluster: Cluster):
    owner = f"plain_{next(_dbs)}"
    await cluster.execute(f"CREATE ROLE {owner} LOGIN PASSWORD 'plainpw'")
    database = await _fresh_database(cluster, owner)
    before = await _public(cluster, database)
    async with _serve(cluster.dsn(database, owner, "plainpw")) as (db, url):
        assert db.catalog.agent_user == owner
        await _use(url)
    assert await _public(cluster, database) == before


async def test_a_unix_socket_dsn(cluster: Cluster):
    database = await _fresh_database(cluster)
    dsn = (f"postgresql://postgres:{cluster.password}@/{database}"
           f"?host={cluster.socket_dir}&port={cluster.port}")
    async with _serve(dsn) as (_, url):
        await _use(url)


async def test_a_schema_it_did_not_make_is_refused_and_left_alone(cluster: Cluster):
    database = await _fresh_database(cluster)
    await cluster.execute("CREATE SCHEMA scratchpad", "CREATE TABLE scratchpad.mine (x int)",
                          database=database)
    with pytest.raises(NotOurs, match=r"scratchpad.*was not made by a glove-scratchpad server"):
        await Database.create(make(), sidecar_dsn=cluster.dsn(database))
    conn = await cluster.connect(database)
    try:
        assert await conn.fetchval("SELECT count(*) FROM scratchpad.mine") == 0
        assert await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = 'glove'") == 0
    finally:
        await conn.close()
