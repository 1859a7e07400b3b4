"""The relay's statements on a pooled sidecar connection: prepared on their second run."""

from __future__ import annotations

import pytest

from glove_scratchpad import errors
from glove_scratchpad.catalog import Step
from glove_scratchpad.resources import define_resource
from glove_scratchpad.wire import Param


@pytest.fixture
async def db(make_db):
    return await make_db([define_resource("nothing", columns=[("k", "bigint")],
                                          volatility="volatile", select=lambda b: [])])


async def test_a_statement_is_prepared_on_its_second_run_and_kept(db):
    async with db.pool.acquire() as conn:
        before = dict(conn._prepared)
        step = Step("SELECT $1::int + 1", [Param(b"41")])
        [out] = await conn.pipeline([step])
        assert out.rows[0].values == (b"42",)
        assert conn._prepared == before  # run once: the unnamed statement
        for value, want in ((b"1", b"2"), (b"2", b"3")):
            # Bound by name from the second run on: a name the sidecar did not have
            # would fail with 26000.
            [out] = await conn.pipeline([Step(step.sql, [Param(value)])])
            assert out.rows[0].values == (want,)
        assert set(conn._prepared) - set(before) == {(step.sql, (0,), ())}


async def test_statements_prepared_before_an_error_are_known_after_it(db):
    async with db.pool.acquire() as conn:
        ok, other = Step("SELECT 7"), Step("SELECT 8")
        await conn.pipeline([ok])
        await conn.pipeline([other])  # both seen once
        with pytest.raises(errors.SqlError) as info:
            await conn.pipeline([ok, Step("SELECT 1 / 0"), other])
        assert info.value.sqlstate == "22012"
        # Only what Postgres prepared before the error is taken as prepared.
        assert ("SELECT 7", (), ()) in conn._prepared
        assert ("SELECT 8", (), ()) not in conn._prepared
        for step, want in ((ok, b"7"), (other, b"8"), (other, b"8")):
            [out] = await conn.pipeline([step])
            assert out.rows[0].values == (want,)
        assert ("SELECT 8", (), ()) in conn._prepared
