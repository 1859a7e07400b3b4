"""The differential check: generated statements through the server, over the wire, and
on plain Postgres tables holding the same rows, must give the same answers.

A short seeded run is part of every test run; ``make differential`` runs a long one
(``python -m tests.differential``). ``GLOVE_DIFFERENTIAL_SEED`` and
``GLOVE_DIFFERENTIAL_STATEMENTS`` change this one's seed and length.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import pytest

from .fix_differential import sides
from .generate import Generator, Step
from .oracle import Answer
from .world import World

SEED = int(os.environ.get("GLOVE_DIFFERENTIAL_SEED", "20261201"))
STATEMENTS = int(os.environ.get("GLOVE_DIFFERENTIAL_STATEMENTS", "2500"))


@pytest.mark.timeout(300)
async def test_generated_statements_answer_as_postgres_does(sidecar: Any) -> None:
    families: collections.Counter[str] = collections.Counter()
    async with sides(sidecar, World(SEED)) as oracle:
        for case in Generator(SEED).cases(10**9):
            if oracle.report.statements >= STATEMENTS:
                break
            families[case.family] += 1
            await oracle.run(case)
        report = oracle.report
    assert report.statements >= STATEMENTS
    assert min(families.values()) >= STATEMENTS // 100, families  # every family ran
    assert not report.disagreements, report.summary()
    # A refusal names its reason, and the generator writes statements Postgres answers.
    assert sum(report.refusals.values()) <= STATEMENTS // 100, report.summary()


HTTP_STATEMENTS = 150


async def test_http_tables_answer_as_postgres_does(sidecar: Any) -> None:
    """A short run over the HTTP API's tables alone (served by the tests' own FastAPI
    app), against plain tables of the same rows: seconds, in every run."""
    families: collections.Counter[str] = collections.Counter()
    async with sides(sidecar, World(SEED)) as oracle:
        for case in Generator(SEED).http_cases(HTTP_STATEMENTS):
            families[case.family] += 1
            await oracle.run(case)
        report = oracle.report
    assert set(families) == {"api_reads", "api_tags", "api_cards"}, families
    assert not report.disagreements, report.summary()
    assert sum(report.refusals.values()) <= HTTP_STATEMENTS // 100, report.summary()


async def test_the_oracle_sees_a_wrong_answer(sidecar: Any) -> None:
    """The check can fail: rows the server would lose, or an internal error, are
    disagreements; a refusal with a reason is counted, not taken for agreement."""
    async with sides(sidecar, World(SEED)) as oracle:
        step = Step("SELECT id FROM people")
        right = Answer(("id",), ((1,), (2,)), "SELECT 2")
        assert await oracle.judge(step, right, right) is None
        lost = Answer(("id",), ((1,),), "SELECT 1")
        assert await oracle.judge(step, lost, right) is not None
        internal = Answer(error=("XX000", "TypeError", None))
        assert await oracle.judge(step, internal, right) is not None
        refused = Answer(error=("0A000", "not supported", "Write it so instead."))
        assert await oracle.judge(step, refused, right) is None
        assert sum(oracle.report.refusals.values()) == 1
