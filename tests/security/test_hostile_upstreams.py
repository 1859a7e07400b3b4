"""A hostile upstream cannot break the server: OpenAPI documents, MCP servers' tool lists
and what they say are untrusted input.

Each test starts ``glove-scratchpad serve`` as a user does, over a hostile HTTP API and a
hostile MCP server of the tests' own (``fix_hostile``, ``hostile_mcp.py``), and reads
what it serves through the wire.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

from ..fix_cli import cli_server
from ..fix_server import fetch, free_port
from .fix_hostile import (
    INJECTION,
    SLOW,
    alias_bomb,
    document,
    exponential,
    hostile_served,
    list_of,
    trap_listening,
)

HOSTILE_MCP = Path(__file__).with_name("hostile_mcp.py")
SECRET = "the-local-secret-4711"
_databases = iter(range(1_000_000))


def _admin(sidecar: Any, database: str) -> str:
    return f"host={sidecar.host} port={sidecar.port} user={sidecar.user} dbname={database}"


async def _database(sidecar: Any, *settings: str) -> tuple[str, str]:
    """A new database of the session's sidecar, with ``settings`` (``name = value``) as
    its sessions' defaults: its ``--sidecar-dsn``, and its name."""
    name = f"hostile_{next(_databases)}"
    async with await psycopg.AsyncConnection.connect(_admin(sidecar, "postgres"),
                                                     autocommit=True) as admin:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name}")
        for setting in settings:
            await admin.execute(f"ALTER DATABASE {name} SET {setting}")
    return (f"postgresql://{sidecar.user}@/{name}?host={quote(sidecar.host)}"
            f"&port={sidecar.port}", name)


@pytest.fixture
async def legacy(sidecar: Any) -> tuple[str, str]:
    """A sidecar database kept for legacy applications: its sessions start with
    ``standard_conforming_strings = off``, so a backslash escapes a quote."""
    found = await _database(sidecar, "standard_conforming_strings = off")
    async with await psycopg.AsyncConnection.connect(_admin(sidecar, found[1])) as conn:
        assert (await (await conn.execute("SHOW standard_conforming_strings")).fetchone()) \
            == ("off",)
    return found


@pytest.fixture
async def fresh(sidecar: Any) -> str:
    """The ``--sidecar-dsn`` of a new database of the session's sidecar."""
    return (await _database(sidecar))[0]


def _config(tmp_path: Path, port: int, dsn: str, body: str) -> Path:
    config = tmp_path / "glove.toml"
    config.write_text(f'[server]\nport = {port}\nsidecar_dsn = "{dsn}"\n\n{body}')
    return config


def _mcp(namespace: str, mode: str) -> str:
    return (f'[[mcp.servers]]\nnamespace = "{namespace}"\ncommand = "{sys.executable}"\n'
            f'args = ["{HOSTILE_MCP}", "{mode}"]\n\n')


def _api(namespace: str, spec: str, extra: str = "") -> str:
    return f'[[openapi.apis]]\nnamespace = "{namespace}"\nspec = "{spec}"\n{extra}\n'


async def test_a_summary_cannot_run_ddl_on_a_legacy_sidecar(
        tmp_path: Path, sidecar: Any, legacy: tuple[str, str]) -> None:
    """A summary that closes its quote where backslashes escape runs nothing: the
    comment is the summary, every character of it."""
    port = free_port()
    async with hostile_served() as api:
        api.serve_json("/evil.json", document(list_of(
            {"type": "object", "properties": {"id": {"type": "integer", "description":
                                                     "an id \\' with a backslash"}}},
            summary=INJECTION)))
        config = _config(tmp_path, port, legacy[0], _api("evil", f"{api.url}/evil.json"))
        async with cli_server("--config", str(config)):
            dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
            assert await fetch(dsn, "SELECT obj_description('evil_list'::regclass), "
                               "col_description('evil_list'::regclass, 1)") == [(
                                   INJECTION + " (select GET /items). Verbs: select. "
                                   "Volatility: stable.",
                                   "an id \\' with a backslash")]
    async with await psycopg.AsyncConnection.connect(_admin(sidecar, legacy[1])) as conn:
        made = await (await conn.execute("SELECT to_regclass('public.pwned')")).fetchone()
        assert made == (None,)


async def test_one_hostile_source_costs_only_its_own_tables(tmp_path: Path, fresh: str) -> None:
    """System column names, NUL in a summary and in a tool's description, a table name
    taken by another source and an MCP server none of whose tools can be mapped: the
    server starts, serves every other table, and says what it left out."""
    port = free_port()
    async with hostile_served() as api:
        api.serve_json("/evil_b.json", document(list_of(
            {"type": "object", "properties": {
                **{n: {"type": "string"} for n in ("xmin", "ctid", "oid", "tableoid")},
                "name": {"type": "string", "description": "A\u0000 name"}}},
            summary="Lists\u0000 b.")))
        body = (_api("evil_b", f"{api.url}/evil_b.json") + _mcp("evil", "evil")
                + _mcp("boom", "explosive"))
        async with cli_server("--config", str(_config(tmp_path, port, fresh, body))) as srv:
            dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
            tables = {t for (t,) in await fetch(
                dsn, "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'glove'")}
            assert tables == {"evil_b_list", "evil_nul_text", "evil_system_columns",
                              "evil_fine"}
            columns = await fetch(dsn, "SELECT column_name FROM information_schema.columns "
                                  "WHERE table_name = 'evil_b_list' ORDER BY ordinal_position")
            assert [c for (c,) in columns] == ["xmin_", "ctid_", "oid_", "tableoid_", "name"]
            comments = await fetch(dsn, "SELECT obj_description('evil_b_list'::regclass), "
                                   "col_description('evil_b_list'::regclass, 5), "
                                   "obj_description('evil_nul_text'::regclass)")
            assert comments == [("Lists b. (select GET /items). Verbs: select. Volatility: stable.",
                                 "A name", 'Reads text. (MCP tool "nul_text" of server '
                                 '"evil".). Verbs: select. Volatility: stable.')]
            assert await fetch(dsn, "SELECT text FROM evil_fine WHERE q = 'hi'") == [
                ("fine: hi",)]
            log = "".join(srv.log)
    assert "Traceback" not in log, log
    said = [
        "MCP server 'evil': table evil_b_list is not served: API 'evil_b' already has a "
        "table of that name",
        "API 'evil_b': removed NUL or other characters Postgres refuses from the text of "
        "table evil_b_list (table comment, column name)",
        "MCP server 'evil': removed NUL or other characters Postgres refuses from the text "
        "of table evil_nul_text (table comment, column q)",
        "MCP server 'evil': tool 'explosive' is not served: a schema of it stands for more "
        "than 100,000 nodes once its references are expanded (the limit MAX_SCHEMA_NODES)",
        "MCP server 'boom' is not served: none of its tools can be made a table (boom_0, "
        "boom_1, boom_2",
    ]
    for line in said:
        assert line in log, log


async def test_hostile_documents_are_refused_within_limits(tmp_path: Path, fresh: str) -> None:
    """An exponential anyOf, a YAML alias bomb, a file: and a foreign host's $ref in a
    remote document, a $ref out of a local document's folder, a document served a byte
    at a time, and one longer than max_document_bytes: each API is refused with a
    message naming the limit, nothing is read or contacted past it, and the server starts
    within 30 s serving the good APIs (one of a $ref to a sibling file, one of a $ref to
    a host allow_refs names)."""
    (tmp_path / "localsecret.json").write_text(json_secret())
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "defs.json").write_text('{"Item": {"type": "object", "properties": '
                                      '{"id": {"type": "integer"}}}}')
    (folder / "near.json").write_text(_json(document(list_of(
        {"$ref": "defs.json#/Item"}))))
    (folder / "far.json").write_text(_json(document(list_of(
        {"$ref": "../localsecret.json#/Item"}))))
    port = free_port()
    async with hostile_served() as api, hostile_served() as other, \
            trap_listening() as trap:
        other.serve_json("/defs.json", {"Item": {"type": "object", "properties": {
            "id": {"type": "integer"}}}})
        api.serve_json("/allowed.json", document(list_of({"$ref": f"{other.url}/defs.json#/Item"})))
        api.serve_json("/anyof.json", exponential())
        api.serve_text("/bomb.yaml", alias_bomb())
        api.serve_json("/fileref.json", document(list_of(
            {"$ref": (tmp_path / "localsecret.json").as_uri() + "#/Item"})))
        api.serve_json("/foreign.json", document(list_of({"$ref": f"{trap.url}/x.json#/X"})))
        api.serve_json("/good.json", document(list_of(
            {"type": "object", "properties": {"id": {"type": "integer"}}})))
        api.serve_json("/items", [{"id": 7}])
        body = "".join([
            _api("anyof", f"{api.url}/anyof.json"), _api("bomb", f"{api.url}/bomb.yaml"),
            _api("fileref", f"{api.url}/fileref.json"),
            _api("foreign", f"{api.url}/foreign.json"),
            # The default deadline is 20 s; the test's own is shorter, to stay quick.
            _api("slow", f"{api.url}{SLOW}", "load_timeout = 2"),
            _api("far", str(folder / "far.json"), f'base_url = "{api.url}"'),
            _api("near", str(folder / "near.json"), f'base_url = "{api.url}"'),
            _api("huge", f"{api.url}/good.json", "max_document_bytes = 100"),
            _api("good", f"{api.url}/good.json"),
            _api("allowed", f"{api.url}/allowed.json", f'allow_refs = ["{other.url}/"]')])
        started = time.monotonic()
        async with cli_server("--config", str(_config(tmp_path, port, fresh, body))) as srv:
            took = time.monotonic() - started
            dsn = f"postgresql://agent@127.0.0.1:{port}/scratchpad"
            assert await fetch(dsn, "SELECT id FROM good_list") == [(7,)]
            assert await fetch(dsn, "SELECT id FROM near_list") == [(7,)]
            assert await fetch(dsn, "SELECT id FROM allowed_list") == [(7,)]
            tables = {t for (t,) in await fetch(
                dsn, "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'glove'")}
            served = await fetch(dsn, "SELECT string_agg(r::text, ' ') FROM "
                                 "scratchpad.resources r")
            log = "".join(srv.log)
    assert took < 30, took  # the whole start-up, the slow document's deadline included
    assert tables == {"good_list", "near_list", "allowed_list"}
    assert other.asked == ["/defs.json"]  # allowed, and fetched once
    assert trap.connections == 0
    assert SECRET not in log and SECRET not in str(served)
    assert "Traceback" not in log, log
    origin = api.url.removeprefix("http://")
    said = {
        "anyof": "(the limit MAX_SCHEMA_NODES)",
        "bomb": "has more than MAX_DOCUMENT_NODES (10,000,000) nodes once its YAML aliases "
                "are expanded",
        "fileref": f"refers to {(tmp_path / 'localsecret.json').as_uri()}, outside its own "
                   f"origin (http://{origin}): refused, and not read (allow_refs names",
        "foreign": f"refers to {trap.url}/x.json, outside its own origin (http://{origin})",
        "slow": f"{api.url}{SLOW} was not read within load_timeout (2 s, for the document "
                "and every reference it needs)",
        "huge": f"{api.url}/good.json is longer than max_document_bytes (100 bytes)",
        "far": f"refers to {(tmp_path / 'localsecret.json').as_uri()}, outside its own "
               f"folder ({folder})",
    }
    for namespace, limit in said.items():
        line = next((x for x in srv.log if f"API {namespace!r} is not served" in x), "")
        assert f"its tables ({namespace}_*) are left out" in line and limit in line, log


def json_secret() -> str:
    return _json({"Item": {"type": "object", "description": SECRET,
                           "properties": {SECRET.replace("-", "_"): {"type": "string"}}}})


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
