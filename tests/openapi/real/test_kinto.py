"""Kinto (PyPI), a JSON store, as tables: started on loopback with its memory backend,
behind the counting proxy, and served from its own Swagger 2.0 document (``/v1/__api__``).

Its records are free-form objects (``additionalProperties``); it pages by a
``Next-Page`` response header holding the next URL, which its document does not
declare, with page parameters no name rule knows (``_limit``, ``_token``); and its
``POST /batch`` returns a list and can delete anything.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import psycopg
import pytest

from ...fix_server import rows
from ...fix_upstream import PYTHON, Upstream, upstream
from ..fix_api import Api, Tables, tables_of

RECORDS = 250
PAGE = 20  # Kinto's paginate_by: the most rows a page holds, whatever _limit asks
LIST = "/v1/buckets/b/collections/c/records"
WHERE = "WHERE bucket_id = 'b' AND collection_id = 'c'"
SELECT = "GET /buckets/{bucket_id}/collections/{collection_id}/records"

INI = f"""
[app:main]
use = egg:kinto
kinto.storage_backend = kinto.core.storage.memory
kinto.cache_backend = kinto.core.cache.memory
kinto.permission_backend = kinto.core.permission.memory
kinto.userid_hmac_secret = a-secret-for-the-tests
kinto.bucket_create_principals = system.Everyone
kinto.paginate_by = {PAGE}

[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = %(http_port)s

[loggers]
keys = root

[handlers]
keys = console

[formatters]
keys = plain

[logger_root]
level = WARNING
handlers = console

[handler_console]
class = StreamHandler
args = (sys.stderr,)
formatter = plain

[formatter_plain]
format = %(message)s
"""


@pytest.fixture(scope="module")
async def kinto(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Upstream]:
    folder: Path = tmp_path_factory.mktemp("kinto")
    (folder / "kinto.ini").write_text(INI)
    command = [PYTHON, "-c", "import sys; from kinto.__main__ import main; sys.exit(main())",
               "start", "--ini", "kinto.ini", "--port", "{port}"]
    async with upstream(command, ready="/v1/", cwd=str(folder)) as api:
        # The records are made on the server itself, not through the proxy.
        async with httpx.AsyncClient(base_url=api.origin + "/v1", timeout=30) as client:
            for path in ("/buckets/b", "/buckets/b/collections/c"):
                (await client.put(path, json={"data": {}})).raise_for_status()
            for start in range(0, RECORDS, 25):  # 25: Kinto's batch_max_requests
                (await client.post("/batch", json={
                    "defaults": {"method": "POST", "path": LIST.removeprefix("/v1")},
                    "requests": [{"body": {"data": {"title": f"record {n}", "n": n,
                                                    "tags": ["odd" if n % 2 else "even"]}}}
                                 for n in range(start + 1, start + 26)]})).raise_for_status()
        yield api


def kinto_tables(kinto: Upstream, sidecar: Any, **config: Any) -> Any:
    """Kinto's tables, from its own document, on a server without --writes."""
    return tables_of(Api(kinto.url, None), sidecar, writes=False,  # type: ignore[arg-type]
                     namespace="kinto", spec=f"{kinto.url}/v1/__api__",
                     base_url=f"{kinto.url}/v1", **config)


@pytest.fixture(scope="module")
async def served(kinto: Upstream, sidecar: Any) -> AsyncIterator[Tables]:
    async with kinto_tables(kinto, sidecar) as tables:
        yield tables


@pytest.fixture(scope="module")
async def declared(kinto: Upstream, sidecar: Any) -> AsyncIterator[Tables]:
    """Tables whose paging the config declares, the records' list among them."""
    hand = [{"name": "declared", "select": SELECT,
             "paging": {"style": "header", "header": "Next-Page", "param": "_token",
                        "size": "_limit"}},
            {"name": "one_page", "select": SELECT, "paging": {"style": "none"}}]
    async with kinto_tables(kinto, sidecar, tables=hand) as tables:
        yield tables


@pytest.fixture
async def t(served: Tables, kinto: Upstream) -> AsyncIterator[Tables]:
    kinto.clear()
    yield served


@pytest.fixture
async def d(declared: Tables, kinto: Upstream) -> AsyncIterator[Tables]:
    kinto.clear()
    yield declared


def listed(kinto: Upstream) -> list[dict[str, list[str]]]:
    """The queries of the record lists the proxy saw."""
    return [parse_qs(urlsplit(p).query) for m, p in kinto.requests
            if m == "GET" and urlsplit(p).path == LIST]


async def columns(conn: psycopg.AsyncConnection[Any], table: str) -> list[tuple[str, str]]:
    return await rows(conn, "SELECT column_name, data_type FROM information_schema.columns "
                      "WHERE table_name = %s ORDER BY ordinal_position", table)


async def test_records_are_rows_holding_the_whole_object(t, kinto):
    async with await t.connect() as conn:
        assert ("value", "jsonb") in await columns(conn, "kinto_get_records")
        got = await rows(conn, "SELECT value->>'title', (value->>'n')::int, value->'tags', "
                         f"value ? 'id', value ? 'last_modified' FROM kinto_get_records {WHERE} "
                         "ORDER BY 2 LIMIT 2")
        assert got == [("record 1", 1, ["odd"], True, True),
                       ("record 2", 2, ["even"], True, True)]
        assert await rows(conn, "SELECT count(*) FILTER (WHERE value IS NULL), "
                          f"count(DISTINCT value->>'id') FROM kinto_get_records {WHERE}") == [
            (0, RECORDS)]


async def test_count_follows_the_next_page_header_to_the_last_record(t, kinto):
    async with await t.connect() as conn:
        assert await rows(conn, f"SELECT count(*) FROM kinto_get_records {WHERE}") == [
            (RECORDS,)]
        assert len(listed(kinto)) == -(-RECORDS // PAGE) == 13
        assert conn.notices == []
        # The page parameters are the server's: no column sets them.
        names = [n for n, _ in await columns(conn, "kinto_get_records")]
        assert not {"limit_", "_limit", "token", "_token"} & set(names)


async def test_a_limit_is_one_request_asking_for_that_many(t, kinto):
    async with await t.connect() as conn:
        got = await rows(conn, f"SELECT value->>'title' FROM kinto_get_records {WHERE} LIMIT 5")
        assert len(got) == 5
    [query] = listed(kinto)
    assert query["_limit"] == ["5"]


async def test_declared_header_paging_reads_every_page(d, kinto):
    async with await d.connect() as conn:
        assert await rows(conn, f"SELECT count(*), sum((value->>'n')::int) FROM kinto_declared "
                          f"{WHERE}") == [(RECORDS, RECORDS * (RECORDS + 1) // 2)]
        assert len(listed(kinto)) == 13
        plan = "\n".join(r[0] for r in await rows(
            conn, f"EXPLAIN SELECT * FROM kinto_declared {WHERE} LIMIT 7"))
        assert "records?_limit=7 (paged by the next-page header, _limit per page)" in plan


async def test_a_page_not_followed_is_a_notice_never_a_silent_first_page(d, kinto):
    async with await d.connect() as conn:
        assert await rows(conn, f"SELECT count(*) FROM kinto_one_page {WHERE}") == [(PAGE,)]
        [(severity, message)] = conn.notices
        assert severity == "NOTICE"
        assert "more rows than the 20 read (a next-page header)" in message
    assert len(listed(kinto)) == 1


async def test_the_batch_is_no_table_a_select_reads(t, kinto):
    async with await t.connect() as conn:
        [(verbs,)] = await rows(conn, "SELECT verbs FROM scratchpad.resources "
                                "WHERE name = 'kinto_batch'")
        assert "select" not in verbs
        with pytest.raises(psycopg.Error) as caught:
            await conn.execute("SELECT * FROM kinto_batch")
        assert caught.value.sqlstate == "42809"  # wrong_object_type: it supports INSERT
        assert 'resource "kinto_batch" cannot be read' in str(caught.value)
        # Every table a SELECT can read, read: only GETs leave the server.
        readable = await rows(conn, "SELECT name, keys FROM scratchpad.resources "
                              "WHERE name LIKE 'kinto%' AND verbs LIKE '%select%'")
        for name, keys in readable:
            given = {"bucket_id": "'b'", "collection_id": "'c'", "id": "'c'",
                     "principal": "'nobody'"}
            where = " AND ".join(f"{k} = {given[k]}" for k in keys.split(", ") if k)
            # Kinto's own answer may be an error (its __version__ is a 500).
            with contextlib.suppress(psycopg.Error):
                await conn.execute(f"SELECT * FROM {name} {'WHERE ' + where if where else ''}"
                                   " LIMIT 1")
        assert len(readable) > 10
    assert kinto.methods() == {"GET"}

