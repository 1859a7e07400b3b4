"""SHOW, SET and EXPLAIN tell what the server enforces, over the wire.

A setting whose sidecar value would say otherwise (the statement timeout in force,
the client connection's TLS, port and connection limit, the user) is answered by the
server; a SET that cannot take effect warns; EXPLAIN says when a run would exceed the
call budget.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_server import serving
from .fix_tls import certificates

MAX_CONNECTIONS = 77


@pytest.fixture(scope="module")
async def served(sidecar: Any, tmp_path_factory: Any) -> AsyncIterator[tuple[Any, Any]]:
    tls = certificates(tmp_path_factory.mktemp("tls"))
    users = {"ann": User(password=make_verifier("ann-pw")),
             "cap": User(password=make_verifier("cap-pw"), statement_timeout=5)}
    db = await Database.create(demo_resources(), sidecar=sidecar, database="test_show",
                               limits=Limits(call_budget=100))
    async with serving(db, users=users, tls_cert=str(tls / "cert.pem"),
                       tls_key=str(tls / "key.pem"), max_connections=MAX_CONNECTIONS) as srv:
        yield srv, tls
    await db.close()


async def connect(served: Any, user: str, tls: bool = False) -> psycopg.AsyncConnection[Any]:
    srv, path = served
    mode = f"sslmode=verify-full&sslrootcert={path / 'ca.pem'}" if tls else "sslmode=disable"
    conn = await psycopg.AsyncConnection.connect(
        f"postgresql://{user}:{user}-pw@localhost:{srv.port}/scratchpad?{mode}",
        autocommit=True)
    conn.warnings = []  # type: ignore[attr-defined]
    conn.add_notice_handler(lambda d: conn.warnings.append(  # type: ignore[attr-defined]
        (d.severity_nonlocalized, d.message_primary)))
    return conn


async def show(conn: psycopg.AsyncConnection[Any], name: str) -> Any:
    cur = await conn.execute(f"SHOW {name}")
    assert cur.description is not None
    return cur.description[0].name, (await cur.fetchone())[0]  # type: ignore[index]


async def test_show_ssl_says_what_the_connection_is(served):
    async with await connect(served, "ann", tls=True) as conn:
        assert conn.pgconn.ssl_in_use
        assert await show(conn, "ssl") == ("ssl", "on")
    async with await connect(served, "ann") as conn:
        assert not conn.pgconn.ssl_in_use
        assert await show(conn, "ssl") == ("ssl", "off")


async def test_show_names_this_servers_port_connection_limit_and_user(served):
    srv, _ = served
    async with await connect(served, "ann") as conn:
        assert await show(conn, "port") == ("port", str(srv.port))
        assert await show(conn, "max_connections") == ("max_connections",
                                                       str(MAX_CONNECTIONS))
        assert await show(conn, "session_authorization") == ("session_authorization", "ann")
        assert await show(conn, "DateStyle") == ("DateStyle", "ISO, MDY")  # Postgres's name


async def test_show_statement_timeout_is_the_limit_in_force(served):
    async with await connect(served, "ann") as conn:
        assert await show(conn, "statement_timeout") == ("statement_timeout", "5min")
    async with await connect(served, "cap") as conn:
        assert await show(conn, "statement_timeout") == ("statement_timeout", "5s")
        cur = await conn.execute("SELECT current_setting('statement_timeout')")
        assert await cur.fetchone() == ("5s",)


@pytest.mark.parametrize("value", ["'10min'", "0"])
async def test_a_statement_timeout_above_the_limit_warns_and_does_not_take(served, value):
    async with await connect(served, "cap") as conn:
        await conn.execute(f"SET statement_timeout = {value}")
        [(severity, message)] = conn.warnings
        assert severity == "WARNING"
        assert message.startswith("statement_timeout is 5s here, this role's limit:")
        assert await show(conn, "statement_timeout") == ("statement_timeout", "5s")


async def test_a_statement_timeout_under_the_limit_takes(served):
    async with await connect(served, "cap") as conn:
        await conn.execute("SET statement_timeout = '2s'")
        assert conn.warnings == []
        assert await show(conn, "statement_timeout") == ("statement_timeout", "2s")


async def test_a_timeout_the_server_does_not_enforce_warns(served):
    async with await connect(served, "ann") as conn:
        await conn.execute("SET idle_in_transaction_session_timeout = '1s'")
        [(severity, message)] = conn.warnings
        assert severity == "WARNING"
        assert message.startswith("idle_in_transaction_session_timeout is accepted but not "
                                  "enforced here")


async def test_explain_says_when_a_run_would_exceed_the_call_budget(served):
    values = ", ".join(f"'q{i}'" for i in range(150))
    sql = f"SELECT * FROM web WHERE query IN ({values})"
    async with await connect(served, "ann") as conn:
        cur = await conn.execute(f"EXPLAIN {sql}")
        lines = [line for (line,) in await cur.fetchall()]
        assert ("WARNING: this plan makes 150 resolver calls; the call budget is 100 per "
                "statement, so running it is refused (54000): narrow the IN lists that fan "
                "out, or split the work into several statements") in lines
        with pytest.raises(psycopg.errors.ProgramLimitExceeded):
            await conn.execute(sql)
        cur = await conn.execute("EXPLAIN SELECT * FROM web WHERE query IN ('a', 'b')")
        assert not any("WARNING" in line for (line,) in await cur.fetchall())
