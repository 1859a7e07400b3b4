"""Shared fixtures: one embedded sidecar for the whole test session.

Each test that needs a Database gets its own sidecar database (``make_db``), so
tests never see each other's shell tables, and the sidecar starts only once.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.server import Database

_names = itertools.count()


@pytest.fixture(scope="session")
async def sidecar() -> AsyncIterator[EmbeddedSidecar]:
    sc = EmbeddedSidecar(temporary=True)
    await sc.start()
    yield sc
    await sc.stop()


@pytest.fixture
async def make_db(sidecar: EmbeddedSidecar) -> AsyncIterator[Callable[..., Any]]:
    made: list[Database] = []

    async def make(resources: Any = None, *, writes: bool = True) -> Database:
        db = await Database.create(
            resources, writes=writes, sidecar=sidecar, database=f"test_{next(_names)}"
        )
        made.append(db)
        return db

    yield make
    for db in made:
        await db.close()
