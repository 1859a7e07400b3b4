"""httpbin as it is (PyPI; its Swagger 2.0 document has no schema at all), behind a
counting proxy: every GET is a table whose answer is one column; status codes and
redirects as httpbin gives them; every operation not served is named at start with its
reason; a SELECT on every table sends only GETs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import ResourceDefinitionError

from ...fix_cli import cli_server
from ...fix_server import free_port, rows
from ...fix_upstream import Upstream
from .fix_httpbin import connect, httpbin_served, served


@pytest.fixture(scope="module")
async def httpbin() -> AsyncIterator[Upstream]:
    async with httpbin_served() as api:
        yield api


@pytest.fixture(scope="module")
async def hb(httpbin: Upstream, sidecar: Any) -> AsyncIterator[Any]:
    async with served(httpbin, sidecar) as (server, _):
        yield server


async def test_a_get_with_no_schema_is_its_answer(httpbin: Upstream, hb: Any) -> None:
    async with await connect(hb) as conn:
        httpbin.clear()
        [(url, args)] = await rows(conn, "SELECT body->>'url', body->'args' FROM hb_get_get")
        assert url.endswith("/get") and args == {}
        assert httpbin.requests == [("GET", "/get")]
        # The document says text/html: the body is text.
        [[html]] = await rows(conn, "SELECT body FROM hb_get_html")
        assert html.lstrip().startswith("<!DOCTYPE html>")
        # application/octet-stream: bytes.
        assert await rows(conn, "SELECT length(body) FROM hb_get_bytes WHERE n = 16") == [(16,)]
        assert await rows(conn, "SELECT pg_typeof(body)::text FROM hb_get_uuid") == [("jsonb",)]
        # The columns say what they are.
        [[said]] = await rows(conn, "SELECT col_description('hb_get_get'::regclass, 1)")
        assert "The whole answer of GET /get" in said


async def test_status_codes_as_httpbin_answers(httpbin: Upstream, hb: Any) -> None:
    async with await connect(hb) as conn:
        httpbin.clear()
        # A 200 with an empty body: one row, NULL.
        assert await rows(conn, "SELECT codes, body FROM hb_get_status WHERE codes = '200'"
                          ) == [("200", None)]
        # A 404 on a one-row GET by its path: no row.
        assert await rows(conn, "SELECT * FROM hb_get_status WHERE codes = '404'") == []
        with pytest.raises(psycopg.errors.ExternalRoutineException) as err:
            await conn.execute("SELECT * FROM hb_get_status WHERE codes = '418'")
        assert "418" in str(err.value)
        assert httpbin.requests == [("GET", "/status/200"), ("GET", "/status/404"),
                                    ("GET", "/status/418")]


async def test_redirects_are_followed_under_base_url(httpbin: Upstream, hb: Any) -> None:
    async with await connect(hb) as conn:
        httpbin.clear()
        [[body]] = await rows(conn, "SELECT body FROM hb_get_redirect WHERE n = 2")
        assert json.loads(body)["url"].endswith("/get")
        assert httpbin.requests == [("GET", "/redirect/2"), ("GET", "/relative-redirect/1"),
                                    ("GET", "/get")]
        [[body]] = await rows(conn, "SELECT body FROM hb_get_absolute_redirect WHERE n = 1")
        assert json.loads(body)["url"].endswith("/get")
        httpbin.clear()
        # Elsewhere: refused, and not sent.
        with pytest.raises(psycopg.errors.ExternalRoutineException) as err:
            await conn.execute("SELECT * FROM hb_get_redirect_to "
                               "WHERE url = 'http://example.invalid/x'")
        assert "the redirect is on another host (http://example.invalid/x)" in str(err.value)
        assert err.value.diag.message_hint
        assert len(httpbin.requests) == 1


async def test_every_table_lists_its_operations(hb: Any) -> None:
    async with await connect(hb) as conn:
        [[said]] = await rows(conn, "SELECT description FROM scratchpad.resources "
                              "WHERE name = 'hb_get_status'")
        assert "(select GET /status/{codes})" in said
        [[said]] = await rows(conn, "SELECT description FROM scratchpad.resources "
                              "WHERE name = 'hb_delete_status'")
        assert "(delete DELETE /status/{codes})" in said


async def test_a_select_on_every_table_sends_only_gets(httpbin: Upstream, hb: Any) -> None:
    """Without --writes, a SELECT on each of httpbin's tables (its POSTs, PUTs, PATCHes
    and DELETEs among them) sends GETs and nothing else."""
    async with await connect(hb) as conn:
        tables = await rows(conn, "SELECT name, keys FROM scratchpad.resources "
                            "WHERE namespace = 'hb' ORDER BY name")
        assert {"hb_post_status", "hb_put_status", "hb_patch_status",
                "hb_delete_status", "hb_get_status"} <= {n for n, _ in tables}
        httpbin.clear()
        values = {"codes": "'200'", "url": "'/get'", "n": "1", "delay": "0",
                  "numbytes": "1", "offset": "0"}
        answered = 0
        for name, keys in tables:
            if name in ("hb_get_drip", "hb_get_stream_bytes", "hb_get_range"):
                continue  # slow by design, and GETs as the rest
            where = " AND ".join(f"{k} = {values.get(k, repr('x'))}"
                                 for k in keys.split(", ") if k)
            try:
                await conn.execute(f"SELECT * FROM {name}" + (f" WHERE {where}" if where
                                                               else ""))
                answered += 1
            except psycopg.Error as exc:  # a table of a write alone: nothing to read
                assert not exc.sqlstate.startswith("XX"), (name, exc)
        assert answered >= 30
        assert httpbin.methods() == {"GET"}, httpbin.requests
        assert not any(p.startswith(("/post", "/put", "/patch", "/delete"))
                       for _, p in httpbin.requests)


async def test_the_start_log_names_every_operation_not_served(
        httpbin: Upstream, sidecar: Any, tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "glove.toml"
    where = f"host={sidecar.host} port={sidecar.port} user={sidecar.user}"
    async with await psycopg.AsyncConnection.connect(f"{where} dbname=postgres",
                                                     autocommit=True) as admin:
        await admin.execute("DROP DATABASE IF EXISTS httpbin_start")
        await admin.execute("CREATE DATABASE httpbin_start")
    url = f"postgresql://{sidecar.user}@/httpbin_start?host={sidecar.host}&port={sidecar.port}"
    config.write_text(f'[server]\nsidecar_dsn = "{url}"\n'
                      f'port = {port}\n\n'
                      f'[[openapi.apis]]\nnamespace = "hb"\nspec = "{httpbin.url}/spec.json"\n'
                      f'base_url = "{httpbin.url}"\nexclude = ["Images"]\n')
    async with cli_server("--config", str(config)) as running:
        log = "".join(running.log)
    [line] = [x for x in log.splitlines() if "operations not served" in x]
    assert "GET /image/png (exclude names it ('Images'))" in line
    assert ("POST /anything (no parameter, request body or response schema: nothing a row "
            "would hold)") in line
    assert "TRACE /anything (TRACE is not mapped" in line
    assert "GET /get" not in line and "GET /status/{codes}" not in line


@pytest.mark.parametrize("key", ["include", "exclude"])
async def test_an_include_or_exclude_that_matches_nothing_stops_the_start(
        httpbin: Upstream, sidecar: Any, key: str) -> None:
    with pytest.raises(ResourceDefinitionError) as err:
        async with served(httpbin, sidecar, **{key: ["Images", "nosuchtag"]}):
            pass
    assert (f"API 'hb': {key} names 'nosuchtag', which matches no operation of the "
            "document") in str(err.value)


async def test_explain_of_a_write_shows_the_url_it_will_call(httpbin: Upstream,
                                                              hb: Any) -> None:
    async with await connect(hb) as conn:
        httpbin.clear()
        said = "\n".join(r[0] for r in await rows(
            conn, "EXPLAIN INSERT INTO hb_post_status (codes) VALUES ('201'), (%s)", "202"))
        assert f"Request: POST {httpbin.url}/status/201 (one request per row)" in said
        assert f"Request: POST {httpbin.url}/status/202 (one request per row)" in said
        said = "\n".join(r[0] for r in await rows(
            conn, "EXPLAIN DELETE FROM hb_delete_status WHERE codes IN ('200', '204')"))
        assert f"Request: DELETE {httpbin.url}/status/200 " in said
        assert f"Request: DELETE {httpbin.url}/status/204 " in said
        assert httpbin.requests == []
