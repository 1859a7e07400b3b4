"""A pipeline's steps and its reply as it is read (``catalog/_steps.py``), on a pooled
connection to the session's sidecar: each step's tag, description and rows as the
sidecar sent them, and the first error with the index of the step that raised it."""

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


async def test_each_step_has_its_own_tag_columns_and_rows(db):
    async with db.pool.acquire() as conn:
        first, second = await conn.pipeline([
            Step("SELECT generate_series(1, $1::int) AS n", [Param(b"3")]),
            Step("SELECT 'x'::text AS word")])
    assert first.tag == "SELECT 3" and [f.name for f in first.fields] == ["n"]
    assert [r.values for r in first.rows] == [(b"1",), (b"2",), (b"3",)]
    assert second.tag == "SELECT 1" and [r.values for r in second.rows] == [(b"x",)]
    assert second.description  # the RowDescription's body, kept as it came


async def test_the_first_error_names_its_step_and_the_connection_is_reused(db):
    async with db.pool.acquire() as conn:
        with pytest.raises(errors.SqlError) as caught:
            await conn.pipeline([Step("SELECT 1"), Step("SELECT 1 / 0"), Step("SELECT nope")])
        assert caught.value.sqlstate == "22012"
        assert caught.value.step == 1  # its index among the steps (the BEGIN is not one)
        [out] = await conn.pipeline([Step("SELECT 2")])
        assert [r.values for r in out.rows] == [(b"2",)] and not conn.broken
