"""Writes and transactions: staging, COMMIT/ROLLBACK, RETURNING, read-your-writes."""

from __future__ import annotations

import pytest

from glove_scratchpad import errors

from .fix_resources import Note, Recorder, github_pr, notes, search


async def test_insert_returning_serves_the_created_rows(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    r = await db.execute("INSERT INTO notes (title) VALUES ('a'), ('b') RETURNING id, title")
    assert r.command_tag == "INSERT 0 2"
    assert r.rows == [(1, "a"), (2, "b")]  # ids assigned by the resolver
    assert rec.total("insert") == 1  # one statement, one call with all its rows


async def test_insert_select_across_resources_receives_exactly_the_selected_rows(make_db):
    rec = Recorder()
    db = await make_db([notes(rec), github_pr(rec)])
    r = await db.execute(
        "INSERT INTO notes (title, body) SELECT title, 'pr ' || number FROM github_pr "
        "WHERE merged ORDER BY number"
    )
    assert r.command_tag == "INSERT 0 2"
    [(verb, titles)] = rec.writes
    assert (verb, titles) == ("insert", ["Add parser", "Docs"])


async def test_with_insert(make_db):
    rec = Recorder()
    db = await make_db([notes(rec), search(rec)])
    r = await db.execute(
        "WITH hits AS (SELECT title FROM search WHERE query = 'q') "
        "INSERT INTO notes (title) SELECT title FROM hits RETURNING title"
    )
    assert sorted(r.rows) == [("q result 1",), ("q result 2",)]


async def test_begin_insert_insert_commit_fires_two_writes_in_order(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    s = db.session()
    await s.execute("BEGIN")
    r1 = await s.execute("INSERT INTO notes (title) VALUES ('first')")
    await s.execute("INSERT INTO notes (title) VALUES ('second')")
    assert rec.writes == []  # staged, nothing fired
    assert "staged" in r1.notices[0].message and "notes.insert(1 row)" in r1.notices[0].message
    assert [w.resource for w in s.preview()] == ["notes", "notes"]
    staged = await s.execute("SELECT id, verb, status FROM scratchpad.staged ORDER BY id")
    assert [row[1:] for row in staged.rows] == [("insert", "staged"), ("insert", "staged")]
    r = await s.execute("COMMIT")
    assert r.command_tag == "COMMIT"
    assert rec.writes == [("insert", ["first"]), ("insert", ["second"])]
    assert [w.status for w in r.committed] == ["fired", "fired"]
    assert s.preview() == []


async def test_rollback_fires_nothing(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    r = await db.execute("BEGIN; INSERT INTO notes (title) VALUES ('x'); ROLLBACK;")
    assert r.command_tag == "ROLLBACK"
    assert rec.writes == []


async def test_commit_and_rollback_without_transaction_warn(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    for verb in ("COMMIT", "ROLLBACK"):
        r = await db.execute(verb)
        assert r.command_tag == verb
        [n] = r.notices
        assert (n.severity, n.code) == ("WARNING", "25P01")
        assert n.message == "there is no transaction in progress"
    assert rec.writes == []


async def test_writes_disabled(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)], writes=False)
    with pytest.raises(errors.ReadOnlySqlTransaction) as info:
        await db.execute("INSERT INTO notes (title) VALUES ('x')")
    assert info.value.sqlstate == "25006" and "--writes" in info.value.hint
    assert rec.writes == []


# The next step a refused DDL's HINT names: a temporary table of the session's own, which
# DROP TABLE and TRUNCATE may take; or, for what no temporary table offers, a CTE.
_MAKE_TEMP = "CREATE TEMP TABLE name (…) or CREATE TEMP TABLE name AS SELECT …"


@pytest.mark.parametrize(("sql", "next_steps"), [
    ("CREATE TABLE t (x int)", (_MAKE_TEMP,)),
    ("DROP TABLE notes", (_MAKE_TEMP, "DROP TABLE and TRUNCATE take only them")),
    ("ALTER TABLE notes ADD COLUMN y int", ("use a CTE (WITH name AS (…)) or a subquery",
                                            "information_schema.tables")),
    ("TRUNCATE notes", (_MAKE_TEMP, "DROP TABLE and TRUNCATE take only them")),
])
async def test_ddl_is_refused(make_db, sql, next_steps):
    db = await make_db([notes(Recorder())])
    with pytest.raises(errors.InsufficientPrivilege) as info:
        await db.execute(sql)
    for step in next_steps:
        assert step in (info.value.hint or ""), info.value.hint
    r = await db.execute("SELECT count(*) FROM information_schema.tables "
                         "WHERE table_schema = 'glove'")
    assert r.rows == [(1,)]


async def test_update_and_delete_by_key_affect_only_rows_that_exist(make_db):
    rec = Recorder()
    db = await make_db([notes(rec, [Note(id=1, title="a"), Note(id=2, title="b")])])
    r = await db.execute("UPDATE notes SET body = 'new' WHERE id = 2")
    assert r.command_tag == "UPDATE 1"
    assert rec.writes == [("update", ({"body": "new"}, {"id": 2}))]
    # A row the select does not return is not affected, and the tool is not called.
    r = await db.execute("UPDATE notes SET title = 'ghost' WHERE id = 9999")
    assert r.command_tag == "UPDATE 0"
    r = await db.execute("DELETE FROM notes WHERE id = 9999")
    assert r.command_tag == "DELETE 0"
    assert len(rec.writes) == 1
    r = await db.execute("DELETE FROM notes WHERE id IN (1, 2)")
    assert r.command_tag == "DELETE 2"
    assert rec.writes[1:] == [("delete", {"id": 1}), ("delete", {"id": 2})]


async def test_update_with_other_predicates_goes_row_by_row(make_db):
    rec = Recorder()
    db = await make_db([notes(rec, [Note(id=1, title="a"), Note(id=2, title="bb"),
                                    Note(id=3, title="cc")])])
    r = await db.execute(
        "UPDATE notes SET title = upper(title) WHERE length(title) = 2 RETURNING id, title"
    )
    assert r.command_tag == "UPDATE 2"
    assert sorted(r.rows) == [(2, "BB"), (3, "CC")]
    assert sorted(rec.writes, key=repr) == [("update", ({"title": "BB"}, {"id": 2})),
                                            ("update", ({"title": "CC"}, {"id": 3}))]
    explain = await db.execute("EXPLAIN DELETE FROM notes WHERE title LIKE 'x%'")
    assert "one delete per matching row" in explain.rows[0][0]


async def test_update_without_primary_key_needs_key_equalities(make_db):
    rec = Recorder()
    db = await make_db([notes(rec, [Note(id=1, title="a")], pk=False)])
    with pytest.raises(errors.FeatureNotSupported) as info:
        await db.execute("UPDATE notes SET body = 'x' WHERE title LIKE 'a%'")
    assert "WHERE" in info.value.hint
    assert rec.writes == []


async def test_missing_verb_lists_the_verbs(make_db):
    db = await make_db([github_pr(Recorder())])
    with pytest.raises(errors.WrongObjectType) as info:
        await db.execute("INSERT INTO github_pr (number, title, merged) VALUES (9, 'x', true)")
    assert "SELECT" in info.value.message


async def test_error_in_transaction_aborts_it_until_rollback(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    s = db.session()
    await s.execute("BEGIN")
    await s.execute("INSERT INTO notes (title) VALUES ('kept?')")
    with pytest.raises(errors.UndefinedColumn):
        await s.execute("SELECT nope FROM notes")
    with pytest.raises(errors.InFailedSqlTransaction):
        await s.execute("SELECT 1")
    r = await s.execute("COMMIT")
    assert r.command_tag == "ROLLBACK"
    assert rec.writes == []
    assert (await s.execute("SELECT 1")).rows == [(1,)]


async def test_savepoints_mark_the_staged_writes(make_db):
    # Drivers nest transactions with savepoints (SQLAlchemy's psycopg dialect on connect).
    rec = Recorder()
    db = await make_db([notes(rec)])
    s = db.session()
    with pytest.raises(errors.NoActiveSqlTransaction):
        await s.execute("SAVEPOINT a")
    await s.execute("BEGIN")
    await s.execute("INSERT INTO notes (title) VALUES ('kept')")
    assert (await s.execute("SAVEPOINT a")).command_tag == "SAVEPOINT"
    await s.execute("INSERT INTO notes (title) VALUES ('dropped')")
    with pytest.raises(errors.UndefinedColumn):
        await s.execute("SELECT nope FROM notes")
    with pytest.raises(errors.InFailedSqlTransaction):
        await s.execute("RELEASE SAVEPOINT a")
    r = await s.execute("ROLLBACK TO SAVEPOINT a")
    assert (r.command_tag, r.notices[0].message) == ("ROLLBACK", "discarded 1 staged write")
    assert s.tx_status == "T"
    assert (await s.execute("RELEASE a")).command_tag == "RELEASE"
    assert [w.statement for w in s.preview()] == ["INSERT INTO notes (title) VALUES ('kept')"]
    assert (await s.execute("COMMIT")).command_tag == "COMMIT"
    assert rec.writes == [("insert", ["kept"])]
    await s.execute("BEGIN")
    with pytest.raises(errors.SqlError) as info:
        await s.execute("ROLLBACK TO a")  # gone with its transaction
    assert (info.value.sqlstate, s.tx_status) == ("3B001", "E")
    await s.execute("ROLLBACK")


async def test_reads_inside_transaction_run_at_once(make_db):
    rec = Recorder()
    db = await make_db([search(rec), notes(rec)])
    r = await db.execute(
        "BEGIN; SELECT * FROM search WHERE query = 'now'; ROLLBACK;"
    )
    assert rec.total("select") == 1
    assert r.statements[1].command_tag == "SELECT 2"


async def test_read_your_writes_merges_by_primary_key(make_db):
    # An upstream that lags: it never shows writes.
    store = [Note(id=1, title="a"), Note(id=2, title="b")]
    from glove_scratchpad.resources import define_resource

    lagging = define_resource(
        "notes", schema=Note, primary_key=["id"], volatility="stable",
        select=lambda b: list(store), insert=lambda rows: [r.model_copy(update={"id": 9})
                                                           for r in rows],
        update=lambda changes, b: None, delete=lambda b: None,
    )
    db = await make_db([lagging])
    s = db.session()
    await s.execute("SELECT * FROM notes")
    await s.execute("INSERT INTO notes (title) VALUES ('new')")
    await s.execute("UPDATE notes SET title = 'A' WHERE id = 1")
    await s.execute("DELETE FROM notes WHERE id = 2")
    r = await s.execute("SELECT id, title FROM notes ORDER BY id")
    assert r.rows == [(1, "A"), (9, "new")]
    # An upstream that already shows the write gives one row, never two.
    store.append(Note(id=9, title="new"))
    r = await s.execute("SELECT id, title FROM notes ORDER BY id")
    assert r.rows == [(1, "A"), (9, "new")]


async def test_fired_write_invalidates_cached_reads(make_db):
    rec = Recorder()
    db = await make_db([notes(rec)])
    s = db.session()
    await s.execute("BEGIN; SELECT * FROM notes; INSERT INTO notes (title) VALUES ('z'); COMMIT;")
    before = rec.total("select")
    await s.execute("SELECT * FROM notes")
    assert rec.total("select") == before + 1
