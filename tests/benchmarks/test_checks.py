"""The benchmarks' answer checks, without a server: each one rejects a wrong answer.

(test_smoke.py runs them end to end, against a server whose resources answer wrongly.)
"""

from __future__ import annotations

import pytest

from benchmarks import checks
from benchmarks.bench_resources import make_rows
from benchmarks.pgbench import PgbenchResult, _check, lookup_script
from benchmarks.results import Section, WrongAnswer


def test_expect_rejects_a_wrong_value() -> None:
    checks.expect("a count", 3, 3)
    with pytest.raises(WrongAnswer, match=r"a count: expected 3, got 4"):
        checks.expect("a count", 4, 3)


def test_item_text_is_the_items_row() -> None:
    assert checks.item_text(42) == ("42", "item 42", "294")
    with pytest.raises(WrongAnswer, match="item 43"):
        checks.expect("lookup", [("42", "item 43", "294")], [checks.item_text(42)])


def test_rows_checksum_sees_one_wrong_value() -> None:
    rows = make_rows(100)
    right = checks.rows_checksum(rows)
    assert checks.rows_checksum(make_rows(100)) == right
    rows[-1]["name"] = "wrong"
    assert checks.rows_checksum(rows) != right
    rows = make_rows(100)
    rows[10]["value"] += 0.25
    assert checks.rows_checksum(rows) != right
    assert checks.rows_checksum(make_rows(99)) != right


def test_rows_checksum_prints_floats_as_postgres() -> None:
    # md5 of "1|1|row 1|0.5\n1|2|row 2|1" would differ with Python's "1.0"
    assert checks._pg_float(1.0) == "1"
    assert checks._pg_float(0.5) == "0.5"
    assert checks._pg_float(499999.5) == "499999.5"


def test_plan_needs_rows_naming_every_resource() -> None:
    names = ("customer", "orders")
    checks.plan("ok", [("Resource customer c …",), ("Resource orders o …",)], names)
    with pytest.raises(WrongAnswer, match="no rows"):
        checks.plan("wire", [], names)
    with pytest.raises(WrongAnswer, match=r"does not name \['orders'\]"):
        checks.plan("wire", [("Resource customer c …",)], names)


def test_pgbench_runs_fail_on_failed_or_missing_transactions() -> None:
    ok = PgbenchResult(tps=1.0, latency_ms=1.0, transactions=10, failed=0)
    _check(ok, "10", "run")
    _check(ok, None, "run")  # -T: some transactions
    with pytest.raises(WrongAnswer, match="2 failed transactions"):
        _check(PgbenchResult(1.0, 1.0, 10, 2), "10", "run")
    with pytest.raises(WrongAnswer, match="processed 9 of 10"):
        _check(PgbenchResult(1.0, 1.0, 9, 0), "10", "run")
    with pytest.raises(WrongAnswer, match="processed 0"):
        _check(PgbenchResult(0.0, 0.0, 0, 0), None, "run")


def test_the_checking_script_times_the_same_statement() -> None:
    timed, checking = lookup_script(1, 100), lookup_script(1, 100, check=True)
    statement = "SELECT * FROM items WHERE id = :id"
    assert timed.splitlines()[1] == statement + ";"
    assert checking.splitlines()[1] == statement + " \\gset got_"
    assert "\\if :got_id != :id or :got_qty != :id * 7 % 1000" in checking


def test_the_lookup_script_reads_the_table_it_is_given() -> None:
    timed, checking = lookup_script(table="big"), lookup_script(check=True, table="big")
    assert timed.splitlines()[1] == "SELECT * FROM big WHERE id = :id;"
    assert checking.splitlines()[1] == "SELECT * FROM big WHERE id = :id \\gset got_"
    assert checking.splitlines()[2:] == lookup_script(check=True).splitlines()[2:]


def test_calls_rejects_a_count_out_of_bounds() -> None:
    checks.calls("big", 1, 1, 1)
    checks.calls("big_ttl", 4, 2, 4)
    with pytest.raises(WrongAnswer, match=r"big: 2 resolver calls, expected 1$"):
        checks.calls("big", 2, 1, 1)
    with pytest.raises(WrongAnswer, match=r"big_ttl: 5 resolver calls, expected 2 to 4"):
        checks.calls("big_ttl", 5, 2, 4)
    with pytest.raises(WrongAnswer, match=r"expected 2 to 4"):
        checks.calls("big_ttl", 1, 2, 4)


def test_ttl_calls_allows_one_call_per_ttl_begun() -> None:
    # within the ttl: one call, or a second by a hair
    assert checks.ttl_calls(1.5, 2.0) == (1, 2)
    # 20 s of statements, ttl 2 s: at most 11 calls made 2 s apart, one of slack
    assert checks.ttl_calls(20.0, 2.0) == (2, 12)
    # past twice the ttl, the last statements came after the first call expired
    assert checks.ttl_calls(4.0, 2.0) == (1, 4)
    assert checks.ttl_calls(4.1, 2.0) == (2, 4)
    assert checks.ttl_calls(1.0, 0.2) == (2, 7)


def test_passed_adds_a_pass_target_and_a_note() -> None:
    section = Section("x", "X", "about", [])
    checks.passed(section, ["a", "b"])
    assert [(c.measured, c.ok) for c in section.checks] == [("2 checked", True)]
    assert "a; b" in section.notes[0]


def test_the_profile_names_each_frames_component() -> None:
    """py-spy names our files by the installed package (glove_scratchpad/server/…);
    each still lands in its own component, not in "other server code"."""
    from benchmarks.profiling import _component

    assert _component("glove_scratchpad/server/net/connection.py").startswith("client connection")
    assert _component("glove_scratchpad/catalog/_client.py").startswith("sidecar client")
    assert _component("glove_scratchpad/server/engine/cache.py").startswith("kept calls")
    assert _component("glove_scratchpad/server/engine/fast.py").startswith("interpreter")
    assert _component("glove_scratchpad/wire/_codec.py").startswith("wire codec")
    assert _component("glove_scratchpad/stream.py") == "other server code"
