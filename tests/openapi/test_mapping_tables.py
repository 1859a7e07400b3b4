"""An HTTP API of the tests' own as tables, over the wire: each mapping rule, each
paging style, retries, errors, writes and roles, against a real server (FastAPI on
uvicorn) whose own OpenAPI document makes the tables."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from ..fix_server import rows
from .api_app import ITEMS
from .fix_api import Api, Tables, api_served, tables_of

FILES = {"name": "files", "select": "GET /files/{path}", "rows": "entries",
         "params": {"path": "folder"}}


@pytest.fixture(scope="module")
async def served(sidecar: Any) -> AsyncIterator[Tables]:
    async with api_served() as api, tables_of(api, sidecar, tables=[FILES],
                                                  reads=["POST /search"]) as tables:
        yield tables


@pytest.fixture
async def t(served: Tables) -> AsyncIterator[Tables]:
    served.api.rec.reset()
    yield served



def requests(api: Api, path: str, method: str = "GET") -> list[dict[str, Any]]:
    return [q for m, p, q, _ in api.rec.requests if p == path and m == method]


# -- reads -------------------------------------------------------------------------------


async def test_the_tables_and_their_columns_follow_the_document(t):
    async with await t.connect() as conn:
        got = await rows(conn, "SELECT column_name, data_type FROM information_schema.columns "
                         "WHERE table_name = 't_list_things' ORDER BY ordinal_position")
        assert got == [("id", "bigint"), ("name", "text"), ("kind", "text"), ("tags", "jsonb"),
                       ("meta", "jsonb"), ("owner", "jsonb"), ("made_at",
                                                               "timestamp with time zone"),
                       ("tag", "text")]
        [(keys, filters, verbs, columns)] = await rows(
            conn, "SELECT keys, filters, verbs, columns FROM scratchpad.resources "
            "WHERE name = 't_list_things'")
        assert (keys, verbs) == ("", "select, insert, update, delete")
        assert filters == "kind, tag, id"
        assert "one of: tool, toy" in columns  # an enum's values
        assert "WHERE id = … reads one row by GET /things/{thing_id}" in columns


@pytest.mark.parametrize(("table", "path", "pages"), [
    ("t_link_items", "/link/items", ITEMS // 100),  # 100 a page: max_page_size
    ("t_cursor_items", "/cursor/items", ITEMS // 100),
    # By offset or page number, a full last page asks once more to see the end.
    ("t_offset_items", "/offset/items", ITEMS // 100 + 1),
    ("t_page_items", "/page/items", ITEMS // 100 + 1)])
async def test_each_paging_style_reads_every_page_and_a_limit_makes_one_request(
        t, table, path, pages):
    async with await t.connect() as conn:
        assert await rows(conn, f"SELECT count(*), sum(n) FROM {table}") == [
            (ITEMS, ITEMS * (ITEMS + 1) // 2)]
        assert len(requests(t.api, path)) == pages
        t.api.rec.requests.clear()
        assert await rows(conn, f"SELECT n FROM {table} LIMIT 5") == [(n,) for n in range(1, 6)]
        [query] = requests(t.api, path)
        assert "5" in query.values()  # the page size is the LIMIT


async def test_a_join_feeding_a_path_key_calls_once_per_distinct_value(t):
    async with await t.connect() as conn:
        got = await rows(conn, "SELECT v.f, x.path FROM (VALUES ('a'), ('b'), ('a')) v(f) "
                         "JOIN t_files x ON x.folder = v.f ORDER BY 1, 2")
        assert got == [("a", "a/a.txt"), ("a", "a/a.txt"), ("a", "a/b.txt"), ("a", "a/b.txt"),
                       ("b", "b/a.txt"), ("b", "b/b.txt")]
    assert sorted(p for m, p, _, _ in t.api.rec.requests if p.startswith("/files")) == [
        "/files/a", "/files/b"]


async def test_list_and_get_route_an_equality_on_the_item_to_the_get(t):
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT name FROM t_list_things WHERE id = 3") == [("thing 3",)]
        assert await rows(conn, "SELECT name FROM t_list_things WHERE id = 99") == []  # a 404
        assert await rows(conn, "SELECT count(*) FROM t_list_things WHERE kind = 'toy'") == [(3,)]
    assert [p for _, p, _, _ in t.api.rec.requests] == ["/things/3", "/things/99", "/things"]
    assert requests(t.api, "/things") == [{"kind": "toy", "per_page": "50", "page": "1"}]


async def test_rows_of_every_shape(t):
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT name, children FROM t_tree") == [
            ("root", [{"name": "leaf", "children": []}])]  # one object; recursive: jsonb
        assert await rows(conn, "SELECT name, pet->>'kind' FROM t_pets ORDER BY 1") == [
            ("rex", "dog"), ("tom", "cat")]  # a union: jsonb
        # Rows that are a union: its options' properties, each nullable.
        assert await rows(conn, "SELECT column_name, data_type, is_nullable FROM "
                          "information_schema.columns WHERE table_name = 't_animals' "
                          "ORDER BY ordinal_position") == [
            ("kind", "text", "YES"), ("lives", "bigint", "YES"), ("good", "boolean", "YES")]
        assert await rows(conn, "SELECT kind, lives, good FROM t_animals ORDER BY 1") == [
            ("cat", 9, None), ("dog", None, True)]
        assert await rows(conn, "SELECT meta->'weight', owner->>'login', made_at::date::text "
                          "FROM t_list_things WHERE id = 2") == [(2, "ann", "2025-01-03")]
        assert await rows(conn, "SELECT title FROM t_search WHERE q = 'pg' LIMIT 2") == [
            ("pg 1",), ("pg 2",)]  # a POST that reads: its body's fields are arguments
    assert t.api.rec.count("/search", "POST") == 1


async def test_a_parameter_and_a_row_field_of_one_name(t, sidecar):
    # With params = { path = "folder" }, the folder has a column of its own.
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT folder, path FROM t_files WHERE folder = 'docs' "
                          "ORDER BY 2") == [("docs", "docs/a.txt"), ("docs", "docs/b.txt")]
    # Without params, the rows' own path is not the folder: said, never silently empty.
    async with tables_of(t.api, sidecar, include=["listFolder"]) as auto, \
            await auto.connect() as conn:
        assert await rows(conn, "SELECT * FROM t_list_folder WHERE path = 'docs'") == []
        [(_, notice)] = conn.notices  # type: ignore[attr-defined]
        assert notice.startswith('resource "t_list_folder" returned 2 rows for path = '
                                 "'docs', none with that path")
        [(columns,)] = await rows(conn, "SELECT columns FROM scratchpad.resources WHERE "
                                  "name = 't_list_folder'")
        assert "a row whose path differs is not returned" in columns


async def test_a_filter_that_no_row_holds_is_the_calls_own(t):
    # tag is a query parameter, not a field of a thing: each row carries the value its
    # call was made with, so Postgres's own WHERE keeps it (a NULL would meet none).
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT id, tag FROM t_list_things WHERE tag = 'b' "
                          "ORDER BY id") == [(3, "b"), (6, "b")]
        # An IN list: one call per value, each row of its own value's call.
        assert await rows(conn, "SELECT id, tag FROM t_list_things WHERE tag IN ('b', 'x') "
                          "ORDER BY id") == [(3, "b"), (6, "b")]
        plan = [r[0] for r in await rows(conn, "EXPLAIN SELECT id FROM t_list_things WHERE "
                                         "tag IN ('b', 'x')")]
        # A search's optional body property, likewise.
        assert await rows(conn, "SELECT title, limit_ FROM t_search WHERE q = 'pg' AND "
                          "limit_ = 2") == [("pg 1", 2), ("pg 2", 2)]
    assert [q.get("tag") for _, p, q, _ in t.api.rec.requests if p == "/things"] == [
        "b", "b", "x"]
    assert [line.split("?")[1].split("&")[0] for line in plan if "Request:" in line] == [
        "tag=b", "tag=x"]


# -- failures ------------------------------------------------------------------------------


async def test_a_429_is_retried_after_retry_after(t):
    t.api.rec.flaky_left = 2
    async with await t.connect() as conn:
        assert await rows(conn, "SELECT n FROM t_flaky_items ORDER BY n") == [(1,), (2,)]
        statuses = await rows(conn, "SELECT arguments->>'status' FROM scratchpad.calls WHERE "
                              "resource = 't_flaky_items' AND verb = 'http GET' ORDER BY at")
    assert [s for (s,) in statuses] == ["429", "429", "200"]


async def test_a_5xx_after_the_retries_is_58030(t):
    async with await t.connect() as conn:
        with pytest.raises(psycopg.errors.IoError) as info:
            await conn.execute("SELECT * FROM t_broken_items")
    assert "the API failed (503 Service Unavailable)" in str(info.value)
    assert len(requests(t.api, "/broken/items")) == 3  # retries = 2


async def test_a_row_without_a_required_field_is_an_error_naming_it(t):
    async with await t.connect() as conn:
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT * FROM t_liar_items")
        assert 'the API returned a row without the field "label"' in str(info.value)
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT * FROM t_liar_nulls")
    assert 'the API returned null for the field "label"' in str(info.value)
    assert info.value.diag.message_hint == ("The document and the API disagree: the column "
                                            "is NOT NULL.")


async def test_a_4xx_is_an_error_with_the_apis_message(t):
    async with await t.connect() as conn:
        with pytest.raises(psycopg.errors.ExternalRoutineException) as info:
            await conn.execute("SELECT * FROM t_list_things WHERE kind = 'lamp'")
    assert "the API refused the request (422 Unprocessable" in str(info.value)
    assert info.value.diag.message_detail.startswith("status 422; the API said: ")


# -- writes --------------------------------------------------------------------------------


async def test_rollback_sends_nothing_and_commit_sends_each_write_once_with_its_key(t):
    async with await t.connect() as conn:
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO t_list_things (name, kind) VALUES ('x', 'toy')")
        await conn.execute("ROLLBACK")
        assert requests(t.api, "/things", "POST") == []
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO t_list_things (name, kind) VALUES ('y', 'toy')")
        await conn.execute("UPDATE t_list_things SET name = 'renamed' WHERE id = 2")
        await conn.execute("DELETE FROM t_list_things WHERE id = 3")
        await conn.execute("COMMIT")
        keys = await rows(conn, "SELECT verb, idempotency_key FROM scratchpad.journal "
                          "ORDER BY seq")
    sent = [(m, p, h.get("idempotency-key")) for m, p, _, h in t.api.rec.requests
            if m != "GET"]
    assert sent == [("POST", "/things", keys[0][1]), ("PATCH", "/things/2", None),
                    ("DELETE", "/things/3", None)]
    assert [v for v, _ in keys] == ["insert", "update", "delete"]
    assert t.api.rec.things[2].name == "renamed" and 3 not in t.api.rec.things


async def test_returning_gives_the_rows_the_api_created(t):
    async with await t.connect() as conn:
        got = await rows(conn, "INSERT INTO t_list_things (name, kind, tags) VALUES "
                         "('made', 'tool', '[\"new\"]') RETURNING id, name, tags, made_at")
    assert got[0][:3] == (8, "made", ["new"]) and got[0][3].year == 2025


async def test_an_update_whose_set_and_where_name_one_column(t):
    async with await t.connect() as conn:
        out = await conn.execute("UPDATE t_list_labels SET name = 'defect' WHERE name = 'bug'")
        assert out.statusmessage == "UPDATE 1"
    [(method, path, _, _)] = [r for r in t.api.rec.requests if r[0] == "PATCH"]
    assert (method, path) == ("PATCH", "/labels/bug")
    assert sorted(t.api.rec.labels) == ["defect", "ui"]


# -- roles and secrets -----------------------------------------------------------------------


async def test_each_role_sends_its_own_token_and_none_is_shown(t, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, httpx's and httpcore's too
    async with await t.connect("ann") as ann, await t.connect("bob") as bob:
        await rows(ann, "SELECT * FROM t_secure_items")
        await rows(bob, "SELECT * FROM t_secure_items")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
            await bob.execute("DELETE FROM t_secure_items WHERE n = 1")
        assert "readers may not delete" in str(info.value)
        plan = [r[0] for r in await rows(ann, "EXPLAIN SELECT * FROM t_secure_items")]
        audit = await rows(ann, "SELECT arguments::text, coalesce(error, '') FROM "
                           "scratchpad.calls")
        catalog = await rows(ann, "SELECT r::text FROM scratchpad.resources r")
    tokens = [h.get("authorization") for m, p, _, h in t.api.rec.requests
              if p.startswith("/secure")]
    assert tokens[:2] == ["Bearer ann-token", "Bearer bob-token"]
    shown = " ".join([str(info.value), *plan, *(a + e for a, e in audit),
                      *(c for (c,) in catalog), caplog.text])
    assert "ann-token" not in shown and "bob-token" not in shown
    assert any("Request: GET http://127.0.0.1:" in line for line in plan)


async def test_a_secret_in_a_next_link_is_shown_nowhere(t, caplog):
    caplog.set_level(logging.DEBUG)
    async with await t.connect() as conn:
        assert len(await rows(conn, "SELECT n FROM t_link_items LIMIT 150")) == 150
        urls = await rows(conn, "SELECT arguments->>'url' FROM scratchpad.calls WHERE "
                          "resource = 't_link_items' AND verb = 'http GET' ORDER BY at")
    [(_, _, second, _)] = [r for r in t.api.rec.requests if r[2].get("after")]
    assert second["signature"] == "next-page-s3cr3t"  # the API got it
    assert urls[-1][0].endswith("signature=***")
    assert "s3cr3t" not in caplog.text


async def test_a_role_without_credentials_is_refused_before_any_request(t):
    async with await t.connect("eve") as eve:
        with pytest.raises(psycopg.errors.InvalidAuthorizationSpecification) as info:
            await eve.execute("SELECT * FROM t_secure_items")
    assert "GET /secure/items requires credentials (HTTPBearer), and none are set for " \
        "user 'eve'" in str(info.value)
    assert requests(t.api, "/secure/items") == []


async def test_the_audit_records_each_request(t):
    async with await t.connect() as conn:
        await rows(conn, "SELECT n FROM t_page_items LIMIT 150")
        got = await rows(conn, "SELECT verb, arguments->>'status', arguments->>'url', "
                         "(arguments->>'bytes')::int > 0, latency_ms >= 0 FROM scratchpad.calls "
                         "WHERE resource = 't_page_items' AND verb LIKE 'http%' AND statement = "
                         "'SELECT n FROM t_page_items LIMIT 150' ORDER BY at")
    assert [(v, s, ok, ms) for v, s, _, ok, ms in got] == [("http GET", "200", True, True)] * 2
    assert got[0][2].endswith("/page/items?per_page=100&page=1")
