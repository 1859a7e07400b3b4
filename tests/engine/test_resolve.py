"""Reads: pushdown, joins, filters, errors, volatility caching."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from pydantic import BaseModel

from glove_scratchpad import errors
from glove_scratchpad.resources import define_resource

from .fix_resources import Recorder, github_pr, search


async def test_missing_required_key_fails_before_any_call(make_db):
    rec = Recorder()
    db = await make_db([search(rec), github_pr(rec)])
    with pytest.raises(errors.MissingRequiredKey) as info:
        await db.execute("SELECT * FROM github_pr, search WHERE github_pr.number = 1")
    err = info.value
    assert err.sqlstate == "22023"
    assert '"search"' in err.message and '"query"' in err.message
    assert "WHERE query = " in err.hint
    assert rec.total() == 0  # github_pr was not called either


async def test_key_is_pushed_down_and_stamped(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.execute("SELECT query, title FROM search WHERE query = 'cats' ORDER BY title")
    assert r.rows == [("cats", "cats result 1"), ("cats", "cats result 2")]
    assert r.command_tag == "SELECT 2"
    assert rec.calls == {("select", '{"query": "cats"}'): 1}


async def test_filter_on_non_key_column_is_applied_by_postgres(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec)])
    r = await db.execute("SELECT number FROM github_pr WHERE base = 'main' ORDER BY number")
    assert r.rows == [(1,), (2,)]  # the resolver ignored base; Postgres did not
    # ...and the declared filter still reached the resolver as an argument
    assert ("select", '{"base": "main"}') in rec.calls


async def test_bool_literal_as_string_matches_false_rows(make_db):
    db = await make_db([github_pr(Recorder())])
    r = await db.execute("SELECT number FROM github_pr WHERE merged = 'false'")
    assert r.rows == [(2,)]


async def test_join_across_two_resources(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec), search(rec)])
    r = await db.execute(
        "SELECT p.number, s.title FROM github_pr p JOIN search s ON s.query = 'x' "
        "WHERE p.merged ORDER BY 1, 2"
    )
    assert r.rows == [(1, "x result 1"), (1, "x result 2"), (3, "x result 1"), (3, "x result 2")]


async def test_limit_on_a_resource(make_db):
    db = await make_db([github_pr(Recorder())])
    r = await db.execute("SELECT number FROM github_pr ORDER BY number DESC LIMIT 2")
    assert r.rows == [(3,), (2,)]


async def test_in_list_fans_out_one_call_per_value(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.execute("SELECT count(*) FROM search WHERE query IN ('a', 'b', 'a')")
    assert r.rows == [(4,)]
    assert rec.calls == {("select", '{"query": "a"}'): 1, ("select", '{"query": "b"}'): 1}


async def test_parameter_and_cast_values(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.execute("SELECT count(*) FROM search WHERE query = $1", ["p"])
    assert r.rows == [(2,)]
    r = await db.execute("SELECT count(*) FROM search WHERE query = 'q' || 'r'")
    assert r.rows == [(2,)]
    assert ("select", '{"query": "qr"}') in rec.calls


async def test_scalar_subquery_resolves_first_then_calls_with_its_value(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec), search(rec)])
    r = await db.execute(
        "SELECT title FROM search WHERE query = (SELECT title FROM github_pr WHERE number = 2)"
        " ORDER BY 1"
    )
    assert r.rows == [("Fix wire bug result 1",), ("Fix wire bug result 2",)]
    assert rec.calls[("select", '{"query": "Fix wire bug"}')] == 1
    assert rec.calls[("select", '{"number": 2}')] == 1


async def test_in_subquery_fans_out(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec), search(rec)])
    r = await db.execute(
        "SELECT count(*) FROM search WHERE query IN (SELECT title FROM github_pr WHERE merged)"
    )
    assert r.rows == [(4,)]
    assert rec.calls[("select", '{"query": "Docs"}')] == 1


async def test_alias_scoped_predicates_bind_only_their_reference(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.execute(
        "SELECT a.title, b.title FROM search a, search b "
        "WHERE a.query = 'x' AND b.query = 'y' AND a.title = 'x result 1' ORDER BY 2"
    )
    assert r.rows == [("x result 1", "y result 1"), ("x result 1", "y result 2")]
    # title is neither a key nor a declared filter: Postgres applies it, no tool sees it.
    assert set(rec.calls) == {("select", '{"query": "x"}'), ("select", '{"query": "y"}')}


async def test_unknown_table_and_column_are_postgres_errors_with_position(make_db):
    db = await make_db([github_pr(Recorder())])
    with pytest.raises(errors.UndefinedTable) as t:
        await db.execute("SELECT * FROM nope")
    assert t.value.position == 15
    with pytest.raises(errors.UndefinedColumn) as c:
        await db.execute("SELECT numbr FROM github_pr")
    assert c.value.sqlstate == "42703"
    assert c.value.position == 8  # mapped back through the rewrite


async def test_resolver_error_names_resource_and_session_stays_usable(make_db):
    def boom(b):
        raise RuntimeError("upstream 503")

    broken = define_resource("broken", columns=[("x", "bigint")], volatility="volatile",
                             select=boom)
    db = await make_db([broken, github_pr(Recorder())])
    with pytest.raises(errors.ExternalRoutineError) as info:
        await db.execute("SELECT * FROM broken")
    assert '"broken"' in info.value.message and "upstream 503" in info.value.message
    # the next step: the arguments, against the table's column descriptions, or again
    assert info.value.hint == ("The tool behind this table reported the error; check the "
                               "arguments against the column descriptions (\\d+ broken), "
                               "or try again.")
    r = await db.execute("SELECT count(*) FROM github_pr")
    assert r.rows == [(3,)]


async def test_wrong_type_from_resolver_is_an_error_not_null(make_db):
    class Row(BaseModel):
        n: int

    bad = define_resource("bad", schema=Row, volatility="volatile",
                          select=lambda b: [{"n": "seven"}])
    db = await make_db([bad])
    with pytest.raises(errors.ExternalRoutineError) as info:
        await db.execute("SELECT n FROM bad")
    assert '"bad"' in info.value.message and '"n"' in info.value.message
    assert "seven" in info.value.message


async def test_reserved_words_as_names(make_db):
    class T(BaseModel):
        user: str
        now: dt.date

    res = define_resource("time", schema=T, volatility="stable",
                          select=lambda b: [T(user="ann", now=dt.date(2024, 1, 2))])
    db = await make_db([res])
    r = await db.execute('SELECT "user", now FROM time')
    assert r.rows == [("ann", dt.date(2024, 1, 2))]


async def test_empty_read_gets_a_notice(make_db):
    db = await make_db([github_pr(Recorder())])
    r = await db.execute("SELECT * FROM github_pr WHERE number = 99")
    assert r.rows == []
    assert not r.notices  # upstream returned rows; Postgres filtered them
    empty = define_resource("empty", columns=[("x", "text")], filters=["x"],
                            volatility="volatile", select=lambda b: [])
    db = await make_db([empty])
    r = await db.execute("SELECT * FROM empty WHERE x = 'zz'")
    assert len(r.notices) == 1
    assert "no rows" in r.notices[0].message and "x = 'zz'" in r.notices[0].message
    assert "column descriptions" in r.notices[0].hint


async def test_stable_is_called_once_per_script_and_again_next_call(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec, "stable")])
    await db.execute("BEGIN; SELECT * FROM github_pr; SELECT count(*) FROM github_pr; COMMIT;")
    assert rec.total() == 1
    await db.execute("SELECT * FROM github_pr")
    assert rec.total() == 2


async def test_immutable_is_called_once_across_calls(make_db):
    rec = Recorder()
    db = await make_db([github_pr(rec, "immutable")])
    for _ in range(3):
        await db.execute("SELECT count(*) FROM github_pr")
    assert rec.total() == 1
    s2 = db.session()
    await s2.execute("SELECT count(*) FROM github_pr")
    assert rec.total() == 1


async def test_a_statement_sharing_a_call_outlives_the_cancelled_owner(make_db):
    """An immutable call in flight is shared by a second statement; when the statement
    that made it is cancelled, the call stops with it and the other makes it anew."""
    calls: list[int] = []
    started = asyncio.Event()

    async def select(b):
        calls.append(b.one("k"))
        started.set()
        await asyncio.sleep(0.2)
        return [{"k": b.one("k"), "v": f"v{b.one('k')}"}]

    slow = define_resource("slow_once", columns=[("k", "bigint"), ("v", "text")], keys=["k"],
                           volatility="immutable", select=select)
    db = await make_db([slow])
    owner = asyncio.create_task(db.session().execute("SELECT v FROM slow_once WHERE k = 1"))
    await started.wait()
    sharer = asyncio.create_task(db.session().execute("SELECT v FROM slow_once WHERE k = 1"))
    await asyncio.sleep(0.05)
    assert calls == [1]  # the second statement waits for the call in flight
    owner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await owner
    assert (await sharer).rows == [("v1",)]
    assert calls == [1, 1]
    assert (await db.execute("SELECT v FROM slow_once WHERE k = 1")).rows == [("v1",)]
    assert calls == [1, 1]  # and its answer is kept, as immutable answers are


async def test_immutable_answers_are_kept_up_to_a_bound_least_recent_first(make_db,
                                                                           monkeypatch):
    from cachetools import LRUCache

    calls: list[int] = []

    def select(b):
        calls.append(b.one("k"))
        return [{"k": b.one("k")}]

    kept = define_resource("kept", columns=[("k", "bigint")], keys=["k"],
                           volatility="immutable", select=select)
    db = await make_db([kept])
    monkeypatch.setattr(db, "immutable", LRUCache(2))
    for k in (1, 2, 3):  # 1 is the least recently used: it goes
        await db.execute(f"SELECT * FROM kept WHERE k = {k}")
    await db.execute("SELECT * FROM kept WHERE k = 2")  # kept, and now the most recent
    await db.execute("SELECT * FROM kept WHERE k = 4")  # 3 goes
    assert calls == [1, 2, 3, 4]
    for k in (2, 4, 1, 3):
        await db.execute(f"SELECT * FROM kept WHERE k = {k}")
    assert calls == [1, 2, 3, 4, 1, 3]


async def test_volatile_is_called_every_statement(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    await db.execute("SELECT * FROM search WHERE query = 'a'")
    await db.execute("SELECT * FROM search WHERE query = 'a'")
    assert rec.total() == 2


async def test_touched_reports_arguments_and_counts(make_db):
    rec = Recorder()
    db = await make_db([search(rec)])
    r = await db.execute("SELECT * FROM search a, search b WHERE a.query = 'x' AND b.query = 'x'")
    [t] = r.touched
    assert (t.resource, t.verb, t.arguments, t.calls) == ("search", "select", {"query": "x"}, 1)


async def test_write_only_resource_cannot_be_read(make_db):
    out = define_resource("outbox", columns=[("to_addr", "text")], volatility="volatile",
                          insert=lambda rows: None)
    db = await make_db([out])
    with pytest.raises(errors.WrongObjectType) as info:
        await db.execute("SELECT * FROM outbox")
    assert "INSERT" in info.value.message


async def test_catalog_queries_pass_through(make_db):
    db = await make_db([github_pr(Recorder()), search(Recorder())])
    r = await db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'glove' "
        "ORDER BY 1"
    )
    assert r.rows == [("github_pr",), ("search",)]
    r = await db.execute(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = 'search' ORDER BY ordinal_position"
    )
    assert r.rows == [("query", "text", "NO"), ("title", "text", "NO")]
    r = await db.execute(
        "SELECT col_description('github_pr'::regclass, 1), obj_description('github_pr'::regclass)"
    )
    assert r.rows[0][0] == "PR number"
    assert r.rows[0][1].startswith("Pull requests")


async def test_several_statements_need_a_transaction_script(make_db):
    db = await make_db([github_pr(Recorder())])
    with pytest.raises(errors.FeatureNotSupported) as info:
        await db.execute("SELECT 1; SELECT 2")
    assert "BEGIN" in info.value.hint


async def test_syntax_error_has_position(make_db):
    db = await make_db([github_pr(Recorder())])
    with pytest.raises(errors.SyntaxError) as info:
        await db.execute("SELECT * FORM github_pr")
    assert info.value.position == 10
