"""A hostile upstream cannot break the server through what it answers, nor through the
values a statement gives it: the requests go where the configuration says, every
upstream byte and request is budgeted, and values are what the upstream sent.

The upstreams are the tests' own (``fix_answers``: an HTTP API over a raw socket;
``typed_mcp.py``: an MCP server), read through the wire.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import psycopg
import pytest

from glove_scratchpad.resources.mcp import (
    ColumnOverride,
    McpBridge,
    McpServerConfig,
    ToolOverride,
)
from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine.guard import Limits

from ..fix_cli import cli_server
from ..fix_server import dsn, free_port, rows, serving
from .fix_answers import TYPED, Answers, answers_served

TYPED_MCP = Path(__file__).with_name("typed_mcp.py")
_names = itertools.count()


@contextlib.asynccontextmanager
async def _served(resources: Any, sidecar: Any, **limits: Any) -> AsyncIterator[str]:
    """The DSN of a server of ``resources`` (``limits``: Limits' fields)."""
    db = await Database.create(resources, writes=True, sidecar=sidecar,
                               limits=Limits(**limits) if limits else None,
                               database=f"answers_{next(_names)}")
    try:
        async with serving(db, writes=True) as server:
            yield dsn(server)
    finally:
        await db.close()


@pytest.fixture
async def api() -> AsyncIterator[Answers]:
    async with answers_served() as served:
        yield served


@pytest.fixture
async def ev(api: Answers, sidecar: Any) -> AsyncIterator[str]:
    """The DSN of a server whose tables are the hostile API's (namespace ``ev``)."""
    bridge = OpenApiBridge([{"namespace": "ev", "spec": f"{api.url}/openapi.json",
                             "base_url": f"{api.url}/api/v1", "retries": 0,
                             "headers": {"Authorization": "Bearer the-token"}}], Path("."))
    resources = await bridge.load()
    try:
        async with _served(resources, sidecar, call_budget=50) as served:
            yield served
    finally:
        await bridge.aclose()


async def _error(conn: psycopg.AsyncConnection[Any], sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        await conn.execute(sql)
    return info.value


# -- where a request goes -------------------------------------------------------------


CLIMBING = ["..", ".", "%2e%2e", "a/../b"]


async def test_a_path_parameter_cannot_leave_the_apis_path(api: Answers, ev: str) -> None:
    """``..``, ``.``, ``%2e%2e`` and ``a/../b`` as path parameters, of a read and of a
    staged DELETE: every request stays under base_url's path, a whole ``.`` or ``..`` is
    22023 before any request, and the audit shows each URL as it was sent."""
    async with await psycopg.AsyncConnection.connect(ev, autocommit=True) as conn:
        for value in CLIMBING:
            sql = f"SELECT uid FROM ev_users WHERE uid = '{value}'"
            if value in (".", ".."):
                err = await _error(conn, sql)
                assert err.sqlstate == "22023", err
                assert "path parameter uid" in str(err)
            else:
                assert await rows(conn, sql) == [(value,)]
            await conn.execute("BEGIN")
            try:
                await conn.execute(f"DELETE FROM ev_users WHERE uid = '{value}'")
                await conn.execute("COMMIT")
            except psycopg.Error as exc:
                assert exc.sqlstate == "22023", exc
                await conn.execute("ROLLBACK")
        err = await _error(conn, "SELECT * FROM ev_issues WHERE owner = '..' AND repo = '..'")
        assert err.sqlstate == "22023"
        plan = "\n".join(r for (r,) in await rows(
            conn, "EXPLAIN SELECT uid FROM ev_users WHERE uid = 'a/../b'"))
        assert f"Request: GET {api.url}/api/v1/users/a%2F..%2Fb " in plan, plan
        audit = await rows(conn, "SELECT arguments->>'url' FROM scratchpad.calls "
                           "WHERE verb LIKE 'http %' ORDER BY at")
    targets = api.targets()
    assert targets, "no request was made"
    for target in targets:
        assert target.startswith("/api/v1/users/") or target.startswith("/api/v1/repos/"), \
            targets
    assert "/api/v1/users/%252e%252e" in targets
    assert "/api/v1/users/a%2F..%2Fb" in targets
    assert sorted(u for (u,) in audit) == sorted(api.url + t for t in targets)


async def test_a_host_header_parameter_is_never_a_column(api: Answers, ev: str) -> None:
    """A document's ``Host`` and ``Content-Length`` header parameters are not columns: no
    WHERE value sets the Host of a request that carries the credentials."""
    async with await psycopg.AsyncConnection.connect(ev, autocommit=True) as conn:
        columns = await rows(conn, "SELECT column_name FROM information_schema.columns "
                             "WHERE table_name = 'ev_hosted'")
        assert {c for (c,) in columns} >= {"x_trace"}
        assert not {c for (c,) in columns} & {"host", "content_length"}, columns
        err = await _error(conn, "SELECT * FROM ev_hosted WHERE host = 'evil.example'")
        assert err.sqlstate == "42703"
        assert await rows(conn, "SELECT name FROM ev_hosted WHERE x_trace = 't'") == [
            (api.url.removeprefix("http://"),)]
    sent = [h for _, t, h in api.asked if t.startswith("/api/v1/hosted")]
    assert sent and sent[0]["X-Trace"] == "t" and sent[0]["Host"] != "evil.example"


# -- every upstream byte and request is budgeted ----------------------------------------


def _rss(pid: int) -> int:
    return int(psutil.Process(pid).memory_info().rss)


def _peak(pid: int) -> int:
    """The process's peak resident size since its last reset (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def test_a_gzip_bomb_and_an_endless_body_fail_within_memory(
        tmp_path: Path, api: Answers, sidecar: Any) -> None:
    """A 1 MB gzip answer that decompresses to 1,000 MB, and a body that never ends:
    each is 54000 naming max_response_bytes, and the server's peak resident size grows
    by at most 300 MB (the limit is 16 MB: the margin is for a busy machine's
    allocator, not for the answers)."""
    port = free_port()
    config = tmp_path / "glove.toml"
    config.write_text(
        f'[server]\nport = {port}\nsidecar_dsn = "{await _sidecar_dsn(sidecar)}"\n\n'
        f'[[openapi.apis]]\nnamespace = "ev"\nspec = "{api.url}/openapi.json"\n'
        f'base_url = "{api.url}/api/v1"\nretries = 0\n')
    async with cli_server("--config", str(config)) as srv:
        pid = srv.proc.pid
        client = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
        async with await psycopg.AsyncConnection.connect(client, autocommit=True) as conn:
            await rows(conn, "SELECT uid FROM ev_users")  # warm: a pool, a first call
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak is counted from now
            before = _rss(pid)
            for table in ("ev_bomb", "ev_endless"):
                err = await _error(conn, f"SELECT * FROM {table}")
                assert err.sqlstate == "54000", err
                assert "max_response_bytes" in str(err.diag.message_primary)
                assert "max_response_bytes" in str(err.diag.message_hint)
            grown = _peak(pid) - before
            assert await rows(conn, "SELECT uid FROM ev_users") == [("1",)]
    assert grown < 300 * 2**20, f"the server grew by {grown / 2**20:.0f} MB"


async def _sidecar_dsn(sidecar: Any) -> str:
    """A new database of the session's sidecar, as a ``--sidecar-dsn``."""
    name = f"answers_rss_{next(_names)}"
    async with await psycopg.AsyncConnection.connect(
            f"host={sidecar.host} port={sidecar.port} user={sidecar.user} dbname=postgres",
            autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
    return (f"postgresql://{sidecar.user}@/{name}?host={quote(sidecar.host)}"
            f"&port={sidecar.port}")


@pytest.mark.parametrize(("table", "requests"), [("ev_cursor", 2), ("ev_linked", 1)])
async def test_a_page_that_repeats_is_an_error_at_its_first_repeat(
        api: Answers, ev: str, table: str, requests: int) -> None:
    """A cursor that always answers ``same`` (asked for once, its page is the same
    again), and a ``Link`` whose next page is the page itself (never asked for again):
    an error that says so at the first repeat, not requests until the timeout."""
    async with await psycopg.AsyncConnection.connect(ev, autocommit=True) as conn:
        err = await _error(conn, f"SELECT * FROM {table}")
    assert err.sqlstate == "38000", err
    assert "paging stopped" in str(err.diag.message_primary)
    assert len(api.targets()) == requests, api.targets()


async def test_every_request_counts_against_the_call_budget(
        api: Answers, sidecar: Any) -> None:
    """Pages are requests: a call budget of 2 lets the first call and one more page
    through, and the third request is 54000."""
    bridge = OpenApiBridge([{"namespace": "ev", "spec": f"{api.url}/openapi.json",
                             "base_url": f"{api.url}/api/v1", "retries": 0}], Path("."))
    resources = await bridge.load()
    try:
        async with _served(resources, sidecar, call_budget=1) as served, \
                await psycopg.AsyncConnection.connect(served, autocommit=True) as conn:
            err = await _error(conn, "SELECT * FROM ev_cursor")
    finally:
        await bridge.aclose()
    assert err.sqlstate == "54000", err
    assert "upstream requests" in str(err.diag.message_primary)
    assert len(api.targets()) == 1


# -- values are what the upstream sent --------------------------------------------------


WRONG = {  # case -> (field, the JSON type sent, the column's type)
    "bool_as_bigint": ("n", "boolean", "bigint"),
    "yes_as_boolean": ("b", "string", "boolean"),
    "one_as_boolean": ("b", "integer", "boolean"),
    "off_as_boolean": ("b", "string", "boolean"),
    "epoch_as_timestamp": ("t", "integer", "timestamp with time zone"),
    "padded_bigint": ("n", "string", "bigint"),
    "object_as_text": ("s", "object", "text"),
}
assert set(WRONG) == set(TYPED) - {"good"}


async def _typed_errors(conn: psycopg.AsyncConnection[Any], table: str) -> None:
    got = await rows(conn, f"SELECT n, b, t = '2024-05-01T12:00:00Z', s FROM {table} "
                     "WHERE kind = 'good'")
    assert got == [(12, True, True, "x")]
    for case, (field, sent, column) in WRONG.items():
        err = await _error(conn, f"SELECT n, b, t, s FROM {table} WHERE kind = '{case}'")
        assert err.sqlstate == "38000", (case, err)
        message = str(err.diag.message_primary)
        assert f'a JSON {sent} for the field "{field}", whose column is {column}' in message, \
            (case, message)


async def test_http_values_are_never_converted(ev: str) -> None:
    """``true`` for a bigint, ``"yes"``, ``1`` and ``"off"`` for a boolean, an epoch for a
    timestamptz, ``" 12 "`` for a bigint, an object for text: each is an error naming the
    field, the JSON type sent and the column's type."""
    async with await psycopg.AsyncConnection.connect(ev, autocommit=True) as conn:
        await _typed_errors(conn, "ev_typed")


async def test_mcp_values_keep_the_same_rule(sidecar: Any) -> None:
    """The same rows from an MCP tool whose output schema says the same types: the same
    errors, worded the same way."""
    columns = {"n": "bigint", "b": "boolean", "t": "timestamptz", "s": "text"}
    config = McpServerConfig(namespace="mt", command=sys.executable, args=[str(TYPED_MCP)],
                             tools={"typed": ToolOverride(rows="rows", columns={
                                 n: ColumnOverride(type=t) for n, t in columns.items()})})
    async with McpBridge([config]) as bridge:
        assert bridge.failures == {}
        async with _served(bridge.resources, sidecar) as served, \
                await psycopg.AsyncConnection.connect(served, autocommit=True) as conn:
            await _typed_errors(conn, "mt_typed")
