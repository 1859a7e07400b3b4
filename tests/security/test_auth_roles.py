"""Authentication (SCRAM, TLS), roles as policies, and the audit, over the wire."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import psycopg
import pytest

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database
from glove_scratchpad.server.config import ServerConfig
from glove_scratchpad.server.net.auth import User, make_verifier
from glove_scratchpad.server.net.server import Server

from ..net.fix_wire import wire_resources
from .fix_tls import certificates


def _psql() -> str:
    # The embedded wheel's psql is built without TLS: this test needs Debian's
    # postgresql-client (.ci/run installs it).
    found = shutil.which("psql")
    assert found, "psql is not installed: apt-get install postgresql-client"
    return found


@pytest.fixture(scope="module")
async def secured(sidecar, tmp_path_factory):
    tls = certificates(tmp_path_factory.mktemp("tls"))
    users = {
        "ann": User(password=make_verifier("s3cret"), writes=True),
        "bob": User(password=make_verifier("hunter2"), deny=["emails"], row_limit=2,
                    statement_timeout=0.5),
        "root": User(password=make_verifier("toor"), admin=True),
    }
    db = await Database.create(demo_resources() + wire_resources(), writes=True,
                               sidecar=sidecar, database="test_secure")
    srv = Server(ServerConfig(port=0, users=users, tls_cert=str(tls / "cert.pem"),
                              tls_key=str(tls / "key.pem"), require_tls=True,
                              startup_timeout=0.5), db)
    await srv.start()
    yield srv, tls
    await srv.shutdown()
    await db.close()


def _dsn(srv, user, password, **extra):
    opts = {"sslmode": "verify-full", "sslrootcert": str(srv[1] / "ca.pem"), **extra}
    query = "&".join(f"{k}={v}" for k, v in opts.items())
    return f"postgresql://{user}:{password}@localhost:{srv[0].port}/scratchpad?{query}"


async def test_right_password_over_verified_tls(secured):
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "ann", "s3cret")) as conn:
        assert conn.pgconn.ssl_in_use
        cur = await conn.execute("SELECT count(*) FROM items")
        assert await cur.fetchone() == (100,)


async def test_wrong_password_and_unknown_user_fail_identically(secured):
    messages = []
    for user, password in (("ann", "wrong"), ("nobody", "s3cret")):
        with pytest.raises(psycopg.OperationalError) as info:
            await psycopg.AsyncConnection.connect(_dsn(secured, user, password))
        messages.append(str(info.value).replace(user, "USER"))
        assert 'password authentication failed for user "' in str(info.value)
    assert messages[0] == messages[1]


async def test_tls_is_required(secured):
    with pytest.raises(psycopg.OperationalError) as info:
        await psycopg.AsyncConnection.connect(_dsn(secured, "ann", "s3cret", sslmode="disable"))
    assert "requires TLS" in str(info.value)


async def test_psql_password_right_and_wrong(secured):
    srv, tls = secured
    env = {**os.environ, "PGSSLMODE": "verify-full", "PGSSLROOTCERT": str(tls / "ca.pem")}
    for password, ok in (("s3cret", True), ("nope", False)):
        proc = await asyncio.create_subprocess_exec(
            _psql(), "-h", "localhost", "-p", str(srv.port), "-U", "ann", "-d",
            "scratchpad", "-XAtc", "SELECT name FROM items WHERE id = 3",
            env={**env, "PGPASSWORD": password},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        if ok:
            assert (proc.returncode, out) == (0, b"item 3\n"), err
        else:
            assert proc.returncode != 0
            assert b'password authentication failed for user "ann"' in err


async def test_startup_timeout_holds(secured):
    reader, writer = await asyncio.open_connection("127.0.0.1", secured[0].port)
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()


async def test_an_invisible_resource_does_not_exist_for_the_role(secured):
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "bob", "hunter2")) as conn:
        cur = await conn.execute("SELECT table_name FROM information_schema.tables "
                                 "WHERE table_name IN ('emails', 'tasks')")
        assert await cur.fetchall() == [("tasks",)]
        cur = await conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'emails'")
        assert await cur.fetchone() == (0,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            await conn.execute("SELECT * FROM emails")


async def test_a_role_without_writes(secured):
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "bob", "hunter2")) as conn:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            await conn.execute("INSERT INTO tasks (title) VALUES ('x')")


async def test_row_limit_and_statement_timeout_of_the_role(secured):
    notices = []
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "bob", "hunter2"),
                                                     autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        cur = await conn.execute("SELECT id FROM items ORDER BY id")
        assert await cur.fetchall() == [(1,), (2,)]
        assert any("truncated to 2 rows" in n for n in notices)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await conn.execute("SELECT * FROM slow WHERE seconds = 5")
        cur = await conn.execute("SELECT 1")
        assert await cur.fetchone() == (1,)


async def test_audit_records_calls_with_arguments_and_status(secured):
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "ann", "s3cret"),
                                                     autocommit=True) as ann:
        await ann.execute("SELECT * FROM web WHERE query = 'audit me'")
        with pytest.raises(psycopg.errors.ExternalRoutineException):
            await ann.execute("SELECT * FROM slow WHERE seconds = -1")
        cur = await ann.execute("SELECT user_name, resource, verb, arguments, status "
                                "FROM scratchpad.calls ORDER BY at")
        rows = await cur.fetchall()
    assert ("ann", "web", "select", {"query": "audit me"}, "ok") in rows
    assert any(r[1] == "slow" and r[4] == "error" for r in rows)
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "bob", "hunter2")) as bob:
        cur = await bob.execute("SELECT count(*) FROM scratchpad.calls WHERE user_name = 'ann'")
        assert await cur.fetchone() == (0,)  # a session reads its own calls only
    async with await psycopg.AsyncConnection.connect(_dsn(secured, "root", "toor")) as root:
        cur = await root.execute("SELECT arguments FROM scratchpad.calls "
                                 "WHERE user_name = 'ann' AND resource = 'web'")
        assert json.dumps({"query": "audit me"}) in [json.dumps(r[0]) for r in
                                                     await cur.fetchall()]
