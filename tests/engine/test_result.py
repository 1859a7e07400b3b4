"""What a statement gives back (``engine/result.py``), through the Python API: the rows as
Python values decoded from what Postgres encoded, the command tag, and the notices."""

from __future__ import annotations

from glove_scratchpad.resources.demo import demo_resources


async def test_a_result_holds_rows_tag_and_notices(make_db):
    db = await make_db(demo_resources())
    r = await db.execute("SELECT 1 AS n, 2.5::float8 AS x, 'a' AS t, NULL::int AS z")
    assert r.command_tag == "SELECT 1"
    assert r.rows == [(1, 2.5, "a", None)]
    s = db.session()
    await s.execute("BEGIN")
    staged = await s.execute("INSERT INTO tasks (title) VALUES ('t')")
    assert staged.command_tag == "INSERT 0 1"
    assert [n.message for n in staged.notices] == [
        "staged #1: tasks.insert(1 row) will be called at COMMIT"]
    await s.execute("ROLLBACK")
