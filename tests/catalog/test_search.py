"""``scratchpad.search(words [, max])`` through the wire: its rows and their order, the
HINT of a table that does not exist, no tool called, any text taken safely, and its
latency over GitHub's whole REST API (760 tables, from npm ``@octokit/openapi``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import psycopg
import pytest
from mcp.types import Tool

from glove_scratchpad.resources import define_fn, define_resource
from glove_scratchpad.resources.mcp import McpConnection, tool_resource
from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database

from ..fix_server import dsn, rows, serving

SPEC = (Path(__file__).parents[1] / "openapi" / "node" / "node_modules" / "@octokit"
        / "openapi" / "generated" / "api.github.com.json")
COLUMNS = ["name", "kind", "namespace", "score", "summary", "keys", "verbs"]
# The acceptance bound of one search at 760 tables, end to end over the wire; a search
# takes about 10 ms on a busy machine.
SEARCH_MS = 100.0
HOSTILE = [
    "o'reilly", "'; DROP TABLE x; --", "100% of it", "_%", "back\\slash \\", "$1 $$ $_gs_$",
    "\"quoted\" ident", "a & b | !c <-> d:*", "", "   ", "ünïcödé stars 星", "x" * 5000,
    "who starred this repo " * 300, "E'\\x00'", "(((", "repo:*",
]


@pytest.fixture(scope="module")
async def github(sidecar: Any) -> AsyncIterator[dict[str, Any]]:
    """GitHub's document as tables, its base URL a port nothing listens on."""
    assert SPEC.exists(), "make test installs tests/openapi/node (npm ci)"
    bridge = OpenApiBridge([{"namespace": "gh", "spec": str(SPEC),
                             "base_url": "http://127.0.0.1:9"}], Path("."))
    tables = await bridge.load()
    db = await Database.create(tables, writes=True, sidecar=sidecar, database="search_gh")
    try:
        async with serving(db, writes=True) as server:
            yield {"dsn": dsn(server), "tables": tables}
    finally:
        await db.close()
        await bridge.aclose()


@pytest.fixture(scope="module")
async def mixed(sidecar: Any) -> AsyncIterator[dict[str, Any]]:
    """Python resources, an MCP tool's table and a function, each resolver counting its
    calls."""
    calls: list[str] = []

    def counted(name: str) -> Any:
        def resolve(b: Any) -> list[dict[str, Any]]:
            calls.append(name)
            return []
        return resolve

    resources = [
        define_resource("crm_contacts", columns=[("email", "text"), ("full_name", "text")],
                        volatility="stable", description="People in the address book.",
                        select=counted("crm_contacts")),
        define_resource("crm_deal_pipeline", columns=[("deal_id", "text"), ("stage", "text")],
                        keys=["deal_id"], volatility="stable",
                        description="Sales opportunities by stage.",
                        select=counted("crm_deals"), insert=counted("crm_deals")),
        tool_resource(McpConnection({"namespace": "weather", "command": "unused"}),
                      Tool.model_validate({
                          "name": "forecast",
                          "description": "Tomorrow's rain and temperature for a city.",
                          "inputSchema": {"type": "object", "required": ["city"],
                                          "properties": {"city": {"type": "string"}}}})),
    ]
    fns = [define_fn("send_sms", description="Text a phone number a short message.",
                     handler=lambda args: calls.append("send_sms"))]
    db = await Database.create(resources, writes=True, sidecar=sidecar,
                               database="search_mixed", fns=fns)
    try:
        async with serving(db, writes=True) as server:
            yield {"dsn": dsn(server), "calls": calls}
    finally:
        await db.close()


async def _search(conn: psycopg.AsyncConnection[Any], words: Any, *more: Any
                  ) -> list[dict[str, Any]]:
    args = ", ".join(["%s"] * (1 + len(more)))
    cur = await conn.execute(f"SELECT * FROM scratchpad.search({args})", (words, *more))
    assert [c.name for c in cur.description or ()] == COLUMNS
    return [dict(zip(COLUMNS, r, strict=True)) for r in await cur.fetchall()]


@pytest.mark.parametrize(("words", "first"), [
    ("rename a branch", "gh_repos_rename_branch"),
    ("the latest release", "gh_repos_get_latest_release"),
    ("mark all my notifications as read", "gh_activity_mark_notifications_as_read"),
    ("cancel a running build", "gh_actions_cancel_workflow_run"),
])
async def test_a_task_finds_its_table_first_with_what_a_call_needs(github, words, first):
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        found = await _search(conn, words)
        three = await _search(conn, words, 3)
    assert found[0]["name"] == first
    assert len(found) == 5 and three == found[:3]
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)
    table = next(t for t in github["tables"] if t.name == first)
    assert found[0]["keys"] == ", ".join(table.keys) and found[0]["kind"] == "table"
    assert found[0]["verbs"] == ", ".join(table.verbs) and found[0]["namespace"] == "gh"
    assert "GET /" not in found[0]["summary"]
    # Five rows read in a few hundred characters: less than one tool's definition.
    assert len("\n".join(" | ".join(map(str, r.values())) for r in found)) < 1000


async def test_synonyms_plurals_and_name_words_find_the_same_table(github):
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        names = [[r["name"] for r in await _search(conn, words)] for words in (
            "who starred this repo", "stargazers of a repository", "who starred the repos",
            "activityListStargazers")]
    for found in names:
        assert "gh_activity_list_stargazers_for_repo" in found


async def test_an_unknown_table_is_answered_with_the_search_and_its_best_matches(github):
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedTable) as caught:
            await conn.execute("SELECT * FROM gh_stargazers WHERE owner = 'o' AND repo = 'r'")
        best = [r["name"] for r in await _search(conn, "gh stargazers", 3)]
        with pytest.raises(psycopg.errors.UndefinedTable) as qualified:
            await conn.execute("SELECT * FROM gh.latest_releases")
        with pytest.raises(psycopg.errors.UndefinedTable) as system:
            await conn.execute("SELECT * FROM staged")
    hint = caught.value.diag.message_hint or ""
    assert caught.value.diag.message_primary == 'relation "gh_stargazers" does not exist'
    assert hint.startswith("SELECT * FROM scratchpad.search('gh stargazers')"), hint
    assert hint.endswith(f"the best matches: {', '.join(best)}."), hint
    assert "gh_activity_list_stargazers_for_repo" in best
    assert "gh_repos_get_latest_release" in (qualified.value.diag.message_hint or "")
    assert system.value.diag.message_hint == (
        "scratchpad.staged is a system view: name it with its schema.")


async def test_a_prepared_statement_of_an_unknown_table_gets_the_same_hint(github):
    conn = await asyncpg.connect(github["dsn"])
    try:
        with pytest.raises(asyncpg.UndefinedTableError) as caught:
            await conn.prepare("SELECT * FROM gh_stargazers WHERE owner = $1")
        found = await conn.fetch("SELECT name FROM scratchpad.search($1, $2)",
                                 "gh stargazers", 3)
    finally:
        await conn.close()
    assert caught.value.hint == (
        "SELECT * FROM scratchpad.search('gh stargazers') finds tables by the words of a "
        f"task; the best matches: {', '.join(r['name'] for r in found)}.")


async def test_a_catalog_lookup_of_a_name_no_table_has_suggests_the_search(github):
    notices: list[tuple[str | None, str | None]] = []
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_hint)))
        missing = await rows(conn, "SELECT name FROM scratchpad.resources WHERE name = %s",
                             "gh_stargazers")
        found = await rows(conn, "SELECT name FROM scratchpad.resources WHERE name = %s",
                           "gh_repos_get")
        some = await rows(conn, "SELECT count(*) FROM scratchpad.resources WHERE name LIKE "
                          "'gh\\_repos\\_get%%'")
    assert missing == [] and found == [("gh_repos_get",)] and some[0][0] > 10
    assert [n[0] for n in notices] == ['no table is named "gh_stargazers"']
    hint = notices[0][1] or ""
    assert hint.startswith("SELECT * FROM scratchpad.search('gh stargazers')"), hint
    assert "gh_activity_list_stargazers_for_repo" in hint


async def test_every_source_is_searched_and_no_tool_is_called(mixed):
    async with await psycopg.AsyncConnection.connect(mixed["dsn"], autocommit=True) as conn:
        first = {words: (await _search(conn, words))[0] for words in (
            "address book people", "deal pipeline", "rain in Paris tomorrow",
            "text a message to a phone", "which writes are staged")}
        joined = await rows(conn, "SELECT s.name, r.keys FROM scratchpad.search('sales deals') s "
                            "JOIN scratchpad.resources r USING (name)")
        audited = await rows(conn, "SELECT count(*) FROM scratchpad.calls WHERE resource "
                             "NOT IN ('resources')")
    assert first["address book people"]["name"] == "crm_contacts"
    assert first["deal pipeline"]["name"] == "crm_deal_pipeline"
    assert first["deal pipeline"]["keys"] == "deal_id"
    assert first["deal pipeline"]["verbs"] == "select, insert"
    assert first["rain in Paris tomorrow"]["name"] == "weather_forecast"
    assert first["rain in Paris tomorrow"]["namespace"] == "weather"
    assert first["text a message to a phone"]["name"] == "fn.send_sms"
    assert first["text a message to a phone"]["kind"] == "function"
    assert first["which writes are staged"]["name"] == "scratchpad.staged"
    assert joined == [("crm_deal_pipeline", "deal_id")]
    assert mixed["calls"] == [] and audited == [(0,)]


@pytest.mark.parametrize("words", HOSTILE)
async def test_any_text_is_a_query_never_an_error(mixed, words):
    async with await psycopg.AsyncConnection.connect(mixed["dsn"], autocommit=True) as conn:
        found = await _search(conn, words, 50)
        # The simple protocol: the text as a literal of the statement itself.
        literal = psycopg.sql.Literal(words).as_string(conn)
        cur = await conn.execute(f"SELECT name FROM scratchpad.search({literal})",
                                 prepare=False)
        simple = await cur.fetchall()
    assert all(r["kind"] in ("table", "function") for r in found)
    assert [(r["name"],) for r in found[:5]] == simple
    assert mixed["calls"] == []


async def test_max_is_bounded_and_null_words_find_nothing(mixed):
    async with await psycopg.AsyncConnection.connect(mixed["dsn"], autocommit=True) as conn:
        assert await _search(conn, None) == []
        assert len(await _search(conn, "crm deal contacts", 0)) == 1
        assert len(await _search(conn, "crm deal contacts", None)) == 2
        assert len(await _search(conn, "crm deal contacts", -5)) == 1


async def test_a_search_answers_under_100_ms_at_735_tables(github):
    assert len(github["tables"]) >= 735
    async with await psycopg.AsyncConnection.connect(github["dsn"], autocommit=True) as conn:
        await _search(conn, "warm up")
        took = []
        for words in ("who starred this repo", "open a PR from my branch",
                      "security vulnerabilities found by dependabot", "my notifications",
                      "delete the repository", "members of our organization") * 3:
            started = time.perf_counter()
            assert await _search(conn, words)
            took.append((time.perf_counter() - started) * 1000)
    assert statistics.median(took) < SEARCH_MS, took


async def test_servers_of_two_names_on_one_database_each_search_their_own(sidecar):
    def table(name: str, about: str) -> Any:
        return define_resource(name, columns=[("id", "text")], volatility="stable",
                               description=about, select=lambda b: [])

    first = await Database.create([table("crm_invoices", "Invoices sent to customers.")],
                                  sidecar=sidecar, database="search_names")
    other = await Database.create([table("hr_payslips", "Payslips of employees.")],
                                  sidecar=sidecar, database="search_names", name="payroll")
    try:
        async with serving(first) as one, serving(other) as two:
            found = [await _first_names(dsn(server), f"SELECT name FROM {schema}.search("
                                        "'invoices payslips', 10)")
                     for server, schema in ((one, "scratchpad"), (two, "payroll_scratchpad"))]
            with pytest.raises(psycopg.errors.UndefinedTable) as caught:
                await _first_names(dsn(two), "SELECT * FROM payslip")
    finally:
        await other.close()
        await first.close()
    assert found == [["crm_invoices"], ["hr_payslips"]]
    assert (caught.value.diag.message_hint or "").startswith(
        "SELECT * FROM payroll_scratchpad.search('payslip')")
    assert "hr_payslips" in (caught.value.diag.message_hint or "")


async def _first_names(url: str, sql: str) -> list[str]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        return [r[0] for r in await rows(conn, sql) if not r[0].startswith("payroll_")
                and not r[0].startswith("scratchpad.")]
