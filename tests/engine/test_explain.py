"""EXPLAIN: the plan of every reference, calling nothing."""

from __future__ import annotations

from .fix_resources import Recorder, github_pr, notes, search


async def test_explain_calls_nothing_and_reports_each_reference(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec), search(rec)])
    r = await db.execute(
        "EXPLAIN SELECT * FROM github_pr p JOIN search s ON s.query IN ('a', 'b') "
        "WHERE p.number = $1"
    )
    assert rec.total() == 0
    assert r.columns[0].name == "QUERY PLAN"
    lines = [row[0] for row in r.rows]
    assert lines[0].startswith("Resource github_pr AS p (stable, read)")
    assert "number = $1" in lines[0] and "calls: 1" in lines[0]
    assert "query IN ('a', 'b')" in lines[1] and "calls: 2" in lines[1]
    assert len(lines) > 2  # then Postgres' own plan
    r = await db.execute("EXPLAIN SELECT * FROM github_pr WHERE number > 1")
    assert any("Scan" in row[0] for row in r.rows[1:])


async def test_explain_warns_about_a_missing_key_instead_of_failing(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.explain("SELECT * FROM search")
    assert rec.total() == 0
    assert r.references[0]["warnings"] == [
        "missing required key query: add WHERE query = …, or join it to another table's column"]


async def test_explain_of_a_write_calls_nothing(make_db):
    rec = Recorder()
    db = await make_db([notes(rec), github_pr(rec)])
    r = await db.explain("INSERT INTO notes (title) SELECT title FROM github_pr")
    assert rec.total() == 0 and rec.writes == []
    assert [ref["access"] for ref in r.references] == ["write", "read"]


async def test_explain_analyze_runs_the_statement(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec)])
    r = await db.execute("EXPLAIN ANALYZE SELECT * FROM github_pr WHERE number = 1")
    assert rec.total() == 1
    assert r.rows[0] == ("Resource calls:",)
    assert any("actual" in row[0] for row in r.rows)
