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

from .fix_server import serving

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


@pytest.fixture(scope="session")
async def server(sidecar: EmbeddedSidecar) -> AsyncIterator[Any]:
    """One wire server for the session, on a free port, serving the demo set plus
    ``tests/net/fix_wire.py``'s resources, with writes allowed."""
    from glove_scratchpad.resources.demo import demo_resources

    from .net.fix_wire import wire_resources

    db = await Database.create(demo_resources() + wire_resources(), writes=True,
                               sidecar=sidecar, database="test_wire")
    async with serving(db, writes=True) as srv:
        yield srv
    await db.close()


@pytest.fixture
def dsn(server: Any) -> str:
    return f"postgresql://agent@127.0.0.1:{server.port}/scratchpad"
