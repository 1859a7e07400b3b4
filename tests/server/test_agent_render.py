"""Rendering for a model: rows, truncation, notices, staged writes, and errors with HINTs."""

from __future__ import annotations

from glove_scratchpad import errors
from glove_scratchpad.server import Call, Notice, Result, StagedWrite
from glove_scratchpad.server.agent import (
    call_tool,
    execute_sql,
    explain_sql,
    render_error,
    render_result,
)


def _pg_text(v):
    return None if v is None else ("t" if v else "f") if isinstance(v, bool) else str(v)


def result(rows, *names, **kw) -> Result:
    """Rows as Postgres sends them in text format."""
    rows = list(rows)
    return Result.text(f"SELECT {len(rows)}", names,
                       [[_pg_text(v) for v in row] for row in rows], **kw)


def test_a_result_is_its_tag_then_a_tsv_table():
    r = result([(1, "a\tb", None), (2, "line\nbreak", True)], "id", "name", "flag")
    assert render_result(r) == ("SELECT 2\nid\tname\tflag\n1\ta\\tb\tNULL\n2\tline\\nbreak\tt")


def test_no_rows_and_no_columns():
    assert render_result(result([], "id")) == "SELECT 0\nid\n(no rows)"
    assert render_result(Result("BEGIN")) == "BEGIN"


def test_a_truncated_result_says_so():
    r = result([(i,) for i in range(120)], "n")
    text = render_result(r, max_rows=10)
    lines = text.splitlines()
    assert lines[:3] == ["SELECT 120", "n", "0"]
    assert lines[11] == "9"
    assert lines[12].startswith("[showing 10 of 120 rows")
    long = render_result(result([("x" * 50,)], "s"), max_cell=20)
    assert "x" * 20 + "…(+30 chars)" in long
    assert "[values longer than 20 characters were cut" in long


def test_notices_show_detail_and_hint():
    r = result([], "title", notices=[Notice("resource \"web\" returned no rows", detail="d",
                                            hint="Re-check the filter values.")])
    assert render_result(r).endswith(
        'NOTICE: resource "web" returned no rows\nDETAIL: d\nHINT: Re-check the filter values.')


def test_a_staged_write():
    write = StagedWrite(1, "emails", "insert", "INSERT INTO emails …",
                        [Call("insert", rows=({"to_addr": "a@b.c"},))])
    text = render_result(Result("INSERT 0 1", staged=[write]))
    assert text == ("INSERT 0 1\nstaged #1: emails.insert(1 row) (fires at COMMIT; ROLLBACK "
                    "discards it)")
    # When the session's own notice names the write, it is not said twice.
    noted = Result("INSERT 0 1", staged=[write], notices=[
        Notice("staged #1: emails.insert(1 row) will be called at COMMIT")])
    assert render_result(noted).count("#1") == 1
    failed = StagedWrite(2, "tasks", "delete", "DELETE …", [Call("delete", bindings={"id": 9})],
                         status="failed", error="no such task")
    assert "failed #2: tasks.delete({'id': 9}): no such task" in render_result(
        Result("COMMIT", committed=[failed]))


def test_an_error_shows_sqlstate_detail_hint_and_position():
    exc = errors.UndefinedTable('relation "wbe" does not exist', position=15,
                                detail="Tables are tools.", hint="\\d lists the tables.")
    assert render_error(exc, "SELECT * FROM wbe") == (
        'ERROR 42P01: relation "wbe" does not exist\n'
        "LINE 1: SELECT * FROM wbe\n"
        "                      ^\n"
        "DETAIL: Tables are tools.\n"
        "HINT: \\d lists the tables.")
    second_line = render_error(errors.SyntaxError("syntax error", position=8), "SELECT\nFRM x")
    assert "LINE 2: FRM x\n        ^" in second_line


async def test_handlers_render_rows_staging_and_errors(make_db):
    db = await make_db()
    session = db.session()
    text = await execute_sql(session, "SELECT title FROM web WHERE query = $1 ORDER BY rank "
                             "LIMIT 1", ["postgresql"])
    assert text.startswith("SELECT 1\ntitle\nPostgreSQL")
    error = await execute_sql(session, "SELECT * FROM web")
    assert error.startswith('ERROR 22023: resource "web" needs a value for its required key')
    assert "\nHINT: Add it to the WHERE clause, e.g. SELECT * FROM web WHERE query = '…'" in error
    # Values are Postgres' text: booleans, dates, JSON.
    text = await execute_sql(session, "SELECT true AS t, date '2024-02-29' AS d, "
                             "'{\"a\": [1]}'::jsonb AS j")
    assert text.splitlines()[2] == 't\t2024-02-29\t{"a": [1]}'
    assert await execute_sql(session, "BEGIN") == "BEGIN"
    staged = await execute_sql(session, "INSERT INTO emails (to_addr, subject) "
                               "VALUES ('a@b.c', 'hi')")
    assert staged.startswith("INSERT 0 1\nNOTICE: staged #1: emails.insert(1 row)")
    preview = await execute_sql(session, "SELECT id, status FROM scratchpad.staged")
    assert preview == "SELECT 1\nid\tstatus\n1\tstaged"
    committed = await execute_sql(session, "COMMIT")
    assert committed.startswith("COMMIT\nNOTICE: fired #1: emails.insert(1 row)\n"
                                "DETAIL: scratchpad.journal txid ")
    # A script renders each statement; an error aborts the transaction, and says so.
    await execute_sql(session, "BEGIN")
    aborted = await execute_sql(session, "SELECT * FROM nowhere")
    assert aborted.startswith("ERROR 42P01") and "send ROLLBACK" in aborted
    assert (await execute_sql(session, "ROLLBACK")).startswith("ROLLBACK")
    plan = await explain_sql(db, "SELECT * FROM web WHERE query = 'x'")
    assert plan.startswith("EXPLAIN\nQUERY PLAN\nResource web (volatile, read): keys: "
                           "query from 'x'")
    assert db.default_session.preview() == []


async def test_call_tool_takes_dicts_or_json_and_renders_bad_arguments(make_db):
    db = await make_db()
    reply = await call_tool(db, "execute_sql", '{"sql": "SELECT $1::int + 1 AS n", '
                                               '"params": [41]}')
    assert (reply.text, reply.is_error) == ("SELECT 1\nn\n42", False)
    reply = await call_tool(db, "explain_sql", {"sql": "SELECT 1"})
    assert not reply.is_error and reply.text.startswith("EXPLAIN")
    for args, words in (({}, '"sql" must be'), ("{", "not JSON"), ([1], "must be an object"),
                        ({"sql": "SELECT 1", "params": 3}, '"params" must be an array')):
        reply = await call_tool(db, "execute_sql", args)
        assert reply.is_error and words in reply.text, reply.text
    reply = await call_tool(db, "drop_tables", {"sql": "x"})
    assert reply.is_error and "unknown tool" in reply.text
    reply = await call_tool(db, "execute_sql", {"sql": "SELEC 1"})
    assert reply.is_error and reply.text.startswith("ERROR 42601")
