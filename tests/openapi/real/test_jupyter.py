"""jupyter_server as it is, over the wire: its own Swagger 2.0 document, fetched with its
token; list-and-get tables whose item parameter is the rows' field; writes that fired;
overrides where its document is wrong. One server for the module (``fix_jupyter``),
behind the counting proxy, so each test sees exactly which requests were sent."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glove_scratchpad.resources import ResourceDefinitionError
from glove_scratchpad.resources.openapi import OpenApiBridge

from ...fix_server import rows
from .fix_jupyter import TOKEN, Jupyter, entry, jupyter, tables_of


@pytest.fixture(scope="module")
async def j() -> AsyncIterator[Jupyter]:
    async with jupyter() as served:
        yield served


def _sent(j: Jupyter, *methods: str) -> list[tuple[str, str]]:
    return [(m, p) for m, p in j.api.requests if m in methods]


# -- the document's own fetch ----------------------------------------------------------


async def test_the_document_is_fetched_with_the_apis_token(j, sidecar):
    j.api.clear()
    async with tables_of(entry(j), sidecar) as t, await t.connect() as conn:
        names = {r[0] for r in await rows(
            conn, "SELECT name FROM scratchpad.resources WHERE namespace = 'j'")}
        assert {"j_get_api_sessions", "j_get_api_contents", "j_get_api_kernels"} <= names
        # Swagger 2.0 without host: the API is where the document came from.
        assert await rows(conn, "SELECT name FROM j_get_api_contents WHERE path = 'a.txt'"
                          ) == [("a.txt",)]
    assert ("GET", "/api/spec.yaml") in j.api.requests


async def test_spec_headers_are_the_documents_alone(j):
    bridge = OpenApiBridge([entry(j, headers={"Authorization": "token not-the-token"},
                                  spec_headers={"Authorization": f"token {TOKEN}"})], Path("."))
    try:
        assert await bridge.load() and not bridge.failures
    finally:
        await bridge.aclose()


async def _failure(config: dict[str, Any]) -> str:
    bridge = OpenApiBridge([config], Path("."))
    try:
        assert await bridge.load() == []
        return str(bridge.failures["j"])
    finally:
        await bridge.aclose()


async def test_a_login_page_instead_of_the_document_says_what_came(j, caplog):
    secret = "wrong-token-7f3a"
    with caplog.at_level(logging.WARNING):
        said = await _failure(entry(j, headers={}, spec=f"{j.spec}?token={secret}"))
    assert "answered 200 OK with an HTML page (text/html" in said, said
    assert "redirected to" in said and "/login" in said, said
    assert "token=***" in said and "set the API's headers" in said, said
    assert "neither JSON nor YAML" not in said
    assert secret not in said and secret not in caplog.text
    said = await _failure(entry(j, spec=f"{j.api.url}/api/nosuch.yaml"))
    assert "/api/nosuch.yaml answered 404 Not Found with an HTML page" in said, said


# -- the item's parameter is the row's field ---------------------------------------------


async def _nulls_under_not_null(conn: Any, table: str) -> list[str]:
    """The columns \\d says are NOT NULL that read NULL in some row."""
    out = []
    for (column,) in await rows(conn, "SELECT column_name FROM information_schema.columns "
                                "WHERE table_name = %s AND is_nullable = 'NO'", table):
        if await rows(conn, f"SELECT 1 FROM {table} WHERE {column} IS NULL"):
            out.append(column)
    return out


async def test_update_and_delete_by_any_where_address_the_rows_id(j, sidecar):
    async with tables_of(entry(j), sidecar) as t, await t.connect() as conn:
        [(made,)] = await rows(conn, "INSERT INTO j_get_api_sessions (path, name, type, "
                               "kernel) VALUES ('a.txt', 's1', 'file', '{\"name\": \"idle\"}')"
                               " RETURNING id")
        assert made
        columns = [r[0] for r in await rows(
            conn, "SELECT column_name FROM information_schema.columns WHERE table_name = "
            "'j_get_api_sessions' ORDER BY ordinal_position")]
        assert columns == ["id", "path", "name", "type", "kernel"]  # no "session"
        assert await rows(conn, "SELECT primary_key FROM scratchpad.resources WHERE name = "
                          "'j_get_api_sessions'") == [("id",)]
        assert await _nulls_under_not_null(conn, "j_get_api_sessions") == []
        j.api.clear()
        cur = await conn.execute("UPDATE j_get_api_sessions SET name = 's2' WHERE name = 's1'")
        assert cur.statusmessage == "UPDATE 1"
        assert _sent(j, "PATCH") == [("PATCH", f"/api/sessions/{made}")]
        assert await rows(conn, "SELECT name FROM j_get_api_sessions WHERE id = %s", made
                          ) == [("s2",)]
        j.api.clear()
        cur = await conn.execute("UPDATE j_get_api_sessions SET name = 's3' WHERE id = %s",
                                 (made,))
        assert cur.statusmessage == "UPDATE 1"  # the row read by the item GET
        assert j.api.requests == [("GET", f"/api/sessions/{made}"),
                                  ("PATCH", f"/api/sessions/{made}")]
        j.api.clear()
        cur = await conn.execute("DELETE FROM j_get_api_sessions WHERE path = 'a.txt'")
        assert cur.statusmessage == "DELETE 1"  # 204, no body
        assert _sent(j, "DELETE") == [("DELETE", f"/api/sessions/{made}")]
        assert await rows(conn, "SELECT * FROM j_get_api_sessions") == []
        assert [r[0] for r in await rows(conn, "SELECT status FROM scratchpad.journal")
                ] == ["fired"] * 4


async def test_a_parameter_that_is_no_field_is_no_key_until_item_key_names_it(j, sidecar,
                                                                           caplog):
    # /api/terminals/{terminal_id}: a terminal is named by its "name".
    with caplog.at_level(logging.WARNING):
        async with tables_of(entry(j), sidecar) as t, await t.connect() as conn:
            await conn.execute("INSERT INTO j_get_api_terminals DEFAULT VALUES")
            assert await _nulls_under_not_null(conn, "j_get_api_terminals") == []
            assert await rows(conn, "SELECT primary_key FROM scratchpad.resources WHERE "
                              "name = 'j_get_api_terminals'") == [("",)]
    assert "item_key = { terminal_id" in caplog.text
    amended = {"name": "get_api_terminals", "item_key": {"terminal_id": "name"}}
    async with tables_of(entry(j, tables=[amended]), sidecar) as t, \
            await t.connect() as conn:
        [(name,)] = await rows(conn, "SELECT name FROM j_get_api_terminals LIMIT 1")
        assert await rows(conn, "SELECT primary_key FROM scratchpad.resources WHERE name = "
                          "'j_get_api_terminals'") == [("name",)]
        j.api.clear()
        cur = await conn.execute("DELETE FROM j_get_api_terminals WHERE last_activity "
                                 "IS NOT NULL")
        assert cur.statusmessage == "DELETE 1"
        assert _sent(j, "DELETE") == [("DELETE", f"/api/terminals/{name}")]


@pytest.mark.parametrize(("item_key", "said"), [
    ({"sesion": "id"}, "item_key names 'sesion', which is not the item path parameter of "
     "the table (session)"),
    ({"session": "idd"}, "item_key = { session = 'idd' }: its rows have no field 'idd'; "
     "did you mean id?"),
])
async def test_an_item_key_the_table_lacks_stops_the_start(j, item_key, said):
    amended = {"name": "get_api_sessions", "item_key": item_key}
    bridge = OpenApiBridge([entry(j, tables=[amended])], Path("."))
    try:
        with pytest.raises(ResourceDefinitionError) as caught:
            await bridge.load()
    finally:
        await bridge.aclose()
    assert said in str(caught.value)


# -- writes that fired, whatever their answers say ----------------------------------------


@pytest.mark.parametrize("in_tx", [False, True], ids=["alone", "in a transaction"])
async def test_writes_answered_2xx_fired(j, sidecar, in_tx):
    save = {"name": "save", "insert": "PUT /api/contents/{path}"}  # a PUT that creates
    async with tables_of(entry(j, tables=[save]), sidecar) as t, await t.connect() as conn:

        async def run(sql: str, tag: str) -> None:
            if in_tx:
                await conn.execute("BEGIN")
            cur = await conn.execute(sql)
            if in_tx:
                await conn.execute("COMMIT")
            assert cur.statusmessage == tag, sql

        name = f"p{int(in_tx)}.txt"
        await run("INSERT INTO j_save (path, type, format, content) VALUES "
                  f"('{name}', 'file', 'text', 'new')", "INSERT 0 1")  # 201
        assert (j.root / name).read_text() == "new"
        # 200 with null where the document says never null (content, format).
        await run(f"UPDATE j_get_api_contents SET path = 'r{name}' WHERE path = '{name}'",
                  "UPDATE 1")
        assert (j.root / f"r{name}").exists() and not (j.root / name).exists()
        await run(f"DELETE FROM j_get_api_contents WHERE path = 'r{name}'", "DELETE 1")  # 204
        assert not (j.root / f"r{name}").exists()
        warnings = [m for s, m in conn.notices if s == "WARNING"]
        assert warnings and all("PATCH /api/contents/{path} fired" in w for w in warnings)
        assert any('null for the field "content"' in w for w in warnings), warnings
        assert [r[0] for r in await rows(conn, "SELECT status FROM scratchpad.journal")
                ] == ["fired"] * 3


# -- overrides for a wrong document --------------------------------------------------------

CONTENTS = {"name": "get_api_contents", "columns": {
    "mimetype": {"nullable": True}, "size": {"type": "bigint"},
    "content": {"type": "jsonb", "nullable": True},
    "format": {"nullable": True, "description": "text, base64 or json; NULL unasked"}}}


async def test_a_directory_breaks_the_document_until_columns_say_what_it_is(j, sidecar):
    async with tables_of(entry(j), sidecar) as t, await t.connect() as conn:
        with pytest.raises(psycopg.errors.ExternalRoutineException, match='"mimetype"'):
            await conn.execute("SELECT * FROM j_get_api_contents WHERE path = 'docs'")
    async with tables_of(entry(j, tables=[CONTENTS]), sidecar) as t, \
            await t.connect() as conn:
        got = await rows(conn, "SELECT type, mimetype, jsonb_array_length(content), "
                         "content -> 0 ->> 'name' FROM j_get_api_contents WHERE path = 'docs'")
        assert got == [("directory", None, 1, "b.txt")]
        assert await rows(conn, "SELECT content #>> '{}' FROM j_get_api_contents "
                          "WHERE path = 'a.txt'") == [("hello\n",)]
        described = dict(await rows(
            conn, "SELECT column_name, data_type || ' ' || is_nullable FROM "
            "information_schema.columns WHERE table_name = 'j_get_api_contents'"))
        assert described["content"] == "jsonb YES" and described["mimetype"] == "text YES"
        [(comment,)] = await rows(conn, "SELECT col_description('j_get_api_contents'"
                                  "::regclass, attnum) FROM pg_attribute WHERE attrelid = "
                                  "'j_get_api_contents'::regclass AND attname = 'format'")
        assert comment.startswith("text, base64 or json; NULL unasked")
        # The rename's answer (content and format null) now agrees with the columns.
        (j.root / "q.txt").write_text("q")
        cur = await conn.execute("UPDATE j_get_api_contents SET path = 'q2.txt' "
                                 "WHERE path = 'q.txt'")
        assert cur.statusmessage == "UPDATE 1"
        assert [m for s, m in conn.notices if s == "WARNING"] == []


async def test_rows_schema_says_what_the_rows_are(j, sidecar):
    folder = {"name": "folder", "select": "GET /api/contents/{path}", "rows": "content",
              "rows_schema": "#/definitions/Contents", "params": {"path": "folder"},
              "columns": {c: {"nullable": True} for c in ("content", "format", "mimetype")}}
    async with tables_of(entry(j, tables=[folder]), sidecar) as t, \
            await t.connect() as conn:
        assert await rows(conn, "SELECT name, path, type, size FROM j_folder "
                          "WHERE folder = 'docs'") == [("b.txt", "docs/b.txt", "file", 4)]


@pytest.mark.parametrize(("table", "said"), [
    ({"name": "get_api_contents", "rows_schema": "#/definitions/Contnts"},
     "table 'get_api_contents': rows_schema = '#/definitions/Contnts' names nothing in the "
     "document"),
    ({"name": "get_api_contents", "columns": {"mimetyp": {"nullable": True}}},
     "table j_get_api_contents: columns names 'mimetyp', which is no column of it; did you "
     "mean mimetype?"),
    ({"name": "get_api_contnts", "columns": {"mimetype": {"nullable": True}}},
     "name = 'get_api_contnts' names no operation, so it amends the automatic table of that "
     "name, and the document maps none; did you mean get_api_contents"),
])
async def test_an_override_the_document_lacks_stops_the_start(j, table, said):
    bridge = OpenApiBridge([entry(j, tables=[table])], Path("."))
    try:
        with pytest.raises(ResourceDefinitionError) as caught:
            await bridge.load()
    finally:
        await bridge.aclose()
    assert said in str(caught.value)


async def test_a_column_override_of_an_unknown_type_or_key_is_refused(j):
    for columns, said in (({"size": {"type": "bignum"}}, "unknown column type 'bignum'"),
                          ({"size": {"nulable": True}}, "nulable is not a key of it")):
        with pytest.raises(ValueError, match=said):
            OpenApiBridge([entry(j, tables=[{"name": "x", "columns": columns}])], Path("."))
