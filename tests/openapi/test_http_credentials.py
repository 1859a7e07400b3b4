"""One role never reads through another's credentials, and no credential leaves.

The attack, on loopback: alice and bob each have a token of their own for one API
(``[openapi.apis.roles.NAME]``); its lasting calls (a ttl, immutable) must be theirs
alone, in memory, in kept tables and on the fast path. Its error pages echo the
request's headers: no token, and no password of a ``base_url``, may come back in an
error, the audit, the journal or a log line.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.logs import JsonFormatter, TextFormatter
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_http import http_served
from ..fix_server import free_port, serving
from .echo_app import TOKENS, Seen, make_app

ALICE, BOB, SHARED = TOKENS
PASSWORD = "tiger-pass-9q"  # of base_url's userinfo
SECRETS = (ALICE, BOB, SHARED, PASSWORD,
           base64.b64encode(f"scott:{PASSWORD}".encode()).decode())
USERS = {"alice": False, "bob": False, "carol": False, "eve": False, "root": True}

@dataclass
class Served:
    port: int
    seen: Seen

    def dsn(self, user: str) -> str:
        return f"postgresql://{user}:{user}-pw@127.0.0.1:{self.port}/scratchpad"

    async def connect(self, user: str) -> psycopg.AsyncConnection[Any]:
        return await psycopg.AsyncConnection.connect(self.dsn(user), autocommit=True)

    async def rows(self, user: str, sql: str, *params: Any) -> list[Any]:
        async with await self.connect(user) as conn:
            return await (await conn.execute(sql, params or None)).fetchall()

@asynccontextmanager
async def served(sidecar: Any, monkeypatch: pytest.MonkeyPatch, name: str
                 ) -> AsyncIterator[Served]:
    monkeypatch.setenv("ECHO_SHARED_TOKEN", SHARED)
    app, seen = make_app()
    async with http_served(app) as url:
        spec = f"{url}/openapi.json"
        bridge = OpenApiBridge([
            {"namespace": "c", "spec": spec, "retries": 0,
             "headers": {"Authorization": "Bearer ${ECHO_SHARED_TOKEN}"},
             "roles": {"alice": {"headers": {"Authorization": f"Bearer {ALICE}"}},
                       "bob": {"headers": {"Authorization": f"Bearer {BOB}"}}},
             "tables": [{"name": "mine_ttl", "select": "mine", "volatility": "stable",
                         "ttl": 60},
                        {"name": "many_kept", "select": "many", "volatility": "immutable"}]},
            {"namespace": "down", "spec": spec, "include": ["mine"], "retries": 0,
             "base_url": f"http://scott:{PASSWORD}@127.0.0.1:{free_port()}"},
        ], Path("."))
        resources = await bridge.load()
        db = await Database.create(resources, writes=True, sidecar=sidecar,
                                   database=f"creds_{name}")
        users = {u: User(password=make_verifier(f"{u}-pw"), writes=True, admin=admin)
                 for u, admin in USERS.items()}
        try:
            async with serving(db, writes=True, users=users) as server:
                yield Served(server.port, seen)
        finally:
            await db.close()
            await bridge.aclose()

async def test_a_ttl_call_is_each_roles_own(sidecar, monkeypatch):
    async with served(sidecar, monkeypatch, "ttl") as s:
        for user in ("alice", "bob", "alice", "bob"):
            assert await s.rows(user, "SELECT DISTINCT owner FROM c_mine_ttl") == [(user,)]
        # A compiled read answered from the caches (the fast path) is shared by the
        # view's users: it must still find each one's own call.
        conns = {u: await s.connect(u) for u in ("alice", "bob")}
        try:
            for _ in range(3):
                for user, conn in conns.items():
                    cur = await conn.execute("SELECT owner FROM c_mine_ttl WHERE n = %s",
                                             (1,), prepare=True)
                    assert await cur.fetchall() == [(user,)]
        finally:
            for conn in conns.values():
                await conn.close()
        # Users without headers of their own send the API's: they share one call.
        for user in ("carol", "eve"):
            assert await s.rows(user, "SELECT DISTINCT owner FROM c_mine_ttl") == [
                ("anyone",)]
        assert dict(s.seen.requests) == {("/mine", "alice"): 1, ("/mine", "bob"): 1,
                                         ("/mine", "anyone"): 1}

async def test_a_kept_call_is_each_roles_own(sidecar, monkeypatch):
    async with served(sidecar, monkeypatch, "kept") as s:
        sql = "SELECT owner, count(*) FROM c_many_kept GROUP BY owner"
        for user in ("alice", "bob", "alice", "bob", "carol", "eve"):
            want = "anyone" if user in ("carol", "eve") else user
            assert await s.rows(user, sql) == [(want, 500)]
        async with await s.connect("alice") as conn:
            for _ in range(3):  # the fast path: a compiled read of kept tables
                cur = await conn.execute("SELECT owner FROM c_many_kept WHERE n = %s",
                                         (7,), prepare=True)
                assert await cur.fetchall() == [("alice",)]
        assert dict(s.seen.requests) == {("/many", "alice"): 1, ("/many", "bob"): 1,
                                         ("/many", "anyone"): 1}
        cache = "SELECT credential, rows FROM scratchpad.cache ORDER BY 1"
        assert await s.rows("alice", cache) == [("alice", 500), (None, 500)]
        assert await s.rows("bob", cache) == [("bob", 500), (None, 500)]
        assert await s.rows("root", cache) == [("alice", 500), ("bob", 500), (None, 500)]
        plan = "\n".join(r for (r,) in await s.rows("bob", "EXPLAIN SELECT * FROM c_many_kept"))
        assert "2 kept now" in plan  # bob's and the shared one, not alice's

async def _error(s: Served, user: str, sql: str) -> str:
    """The whole text of the error ``sql`` gives ``user``: message, DETAIL, HINT."""
    with pytest.raises(psycopg.Error) as caught:
        await s.rows(user, sql)
    diag = caught.value.diag
    return "\n".join(t or "" for t in (diag.sqlstate, diag.message_primary,
                                        diag.message_detail, diag.message_hint))

async def test_no_secret_comes_back_from_an_echoing_api(sidecar, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    async with served(sidecar, monkeypatch, "echo") as s:
        texts = {}
        for code, state in ((400, "38000"), (401, "28000"), (403, "42501"), (500, "58030")):
            texts[code] = await _error(s, "alice", f"SELECT * FROM c_echo WHERE code = {code}")
            assert texts[code].startswith(state)
            assert "authorization: ***" in texts[code]  # the echo, redacted
        texts["shared"] = await _error(s, "carol", "SELECT * FROM c_echo WHERE code = 400")
        texts["write"] = await _error(s, "bob", "INSERT INTO c_notes (text) VALUES ('hi')")
        assert "authorization: ***" in texts["write"]
        texts["row"] = await _error(s, "alice", "SELECT * FROM c_odd")
        assert "***" in texts["row"]  # the value quoted, redacted
        texts["down"] = await _error(s, "alice", "SELECT * FROM down_mine")
        assert "base_url (http://127.0.0.1:" in texts["down"]
        audit = await s.rows("root", "SELECT c::text FROM scratchpad.calls c")
        journal = await s.rows("root", "SELECT j::text FROM scratchpad.journal j")
        assert any("HTTP 400" in row for (row,) in audit)
        assert journal
    lines = [f.format(r) for r in caplog.records for f in (TextFormatter(), JsonFormatter())]
    everything = "\n".join([*texts.values(), *(r for (r,) in audit),
                            *(r for (r,) in journal), *lines])
    leaked = [secret for secret in SECRETS if secret in everything]
    assert leaked == []


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_no_secret_reaches_a_servers_log_or_traces(tmp_path: Path, log_format: str
                                                         ) -> None:
    """The same attack on ``serve``: its log (``-v``, in either format) and the spans it
    exports hold neither a token nor base_url's password."""
    from ..fix_cli import cli_server
    from ..fix_otlp import otlp_receiver

    port = free_port()
    app, _ = make_app()
    async with http_served(app) as url:
        config = tmp_path / "glove.toml"
        config.write_text(
            f'[server]\nsidecar_dir = "{tmp_path / "pg"}"\nport = {port}\n\n'
            f'[[openapi.apis]]\nnamespace = "c"\nspec = "{url}/openapi.json"\nretries = 0\n'
            'headers = { Authorization = "Bearer ${ECHO_SHARED_TOKEN}" }\n'
            f'[openapi.apis.roles.alice]\nheaders = {{ Authorization = "Bearer {ALICE}" }}\n\n'
            f'[[openapi.apis]]\nnamespace = "down"\nspec = "{url}/openapi.json"\n'
            f'include = ["mine"]\nretries = 0\n'
            f'base_url = "http://scott:{PASSWORD}@127.0.0.1:{free_port()}"\n')
        with otlp_receiver() as (endpoint, spans):
            async with cli_server("--config", str(config), "--writes", "-v", "--log-format",
                                  log_format, "--otlp-endpoint", endpoint,
                                  env={"OTEL_BSP_SCHEDULE_DELAY": "100",
                                       "ECHO_SHARED_TOKEN": SHARED}) as running:
                dsn = f"postgresql://alice@127.0.0.1:{port}/scratchpad"
                texts = []
                async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
                    for sql in ("SELECT * FROM c_echo WHERE code = 401",
                                "SELECT * FROM c_echo WHERE code = 500",
                                "INSERT INTO c_notes (text) VALUES ('hi')",
                                "SELECT * FROM down_mine"):
                        with pytest.raises(psycopg.Error) as caught:
                            await c.execute(sql)
                        texts.append(str(caught.value))
                    for view in ("calls", "journal"):
                        cur = await c.execute(f"SELECT v::text FROM scratchpad.{view} v")
                        texts += [r for (r,) in await cur.fetchall()]
                async with asyncio.timeout(20):
                    while not any(s.name == "http POST" for s in spans):
                        await asyncio.sleep(0.1)
                log = "".join(running.log)
    assert "authorization: ***" in "\n".join(texts)  # the echo came, redacted
    assert "tool call failed: c_notes insert" in log
    assert any(s.name == "c_echo select" for s in spans)
    exported = b"".join(s.SerializeToString() for s in spans)
    leaked = [s for s in SECRETS if s in "\n".join([*texts, log]) or s.encode() in exported]
    assert leaked == []


async def test_a_document_that_cannot_be_fetched_is_left_out_without_its_password(
        tmp_path: Path) -> None:
    """The API is left out (the server still starts), and the warning that says so shows
    the document's URL without its password."""
    import signal
    import sys

    config = tmp_path / "glove.toml"
    config.write_text(f'[[openapi.apis]]\nnamespace = "c"\n'
                      f'spec = "http://scott:{PASSWORD}@127.0.0.1:{free_port()}/openapi.json"\n')
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--config",
        str(config), "--port", "0", "--sidecar-dir", str(tmp_path / "pg"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(90):
            while b"psql" not in (line := await proc.stdout.readline()):
                assert line, "the server ended before it served"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert "could not fetch http://scott:***@127.0.0.1:" in err.decode(), err
    assert "is not served" in err.decode()
    assert PASSWORD.encode() not in out + err
