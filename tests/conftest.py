"""Shared fixtures: one embedded sidecar for the whole test session.

Each test that needs a Database gets its own sidecar database (``make_db``), so
tests never see each other's shell tables, and the sidecar starts only once. That
database is dropped after the test: the cluster stays small, and its checkpoints and
the session's last stop do not write and delete a thousand databases' files.

The sidecar is a throwaway cluster: it writes without fsync (as tests/deploy's
clusters do). Each write still reaches the kernel before it is acknowledged, so a
postmaster killed by a test (the restart tests) loses nothing; only a crash of the
machine could, and the cluster does not outlive the session anyway.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import pytest

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.server import Database

from .fix_server import serving

_names = itertools.count()


@pytest.fixture(scope="session")
async def sidecar() -> AsyncIterator[EmbeddedSidecar]:
    sc = EmbeddedSidecar(temporary=True)
    await sc.start()
    admin = await asyncpg.connect(sc.dsn, database="postgres")
    try:
        for setting in ("fsync", "full_page_writes"):
            await admin.execute(f"ALTER SYSTEM SET {setting} = off")
        await admin.execute("SELECT pg_reload_conf()")
    finally:
        await admin.close()
    yield sc
    await sc.stop()


@pytest.fixture
async def make_db(sidecar: EmbeddedSidecar) -> AsyncIterator[Callable[..., Any]]:
    made: list[Database] = []
    names: list[str] = []

    async def make(resources: Any = None, *, writes: bool = True) -> Database:
        names.append(f"test_{next(_names)}")
        db = await Database.create(resources, writes=writes, sidecar=sidecar, database=names[-1])
        made.append(db)
        return db

    yield make
    for db in made:
        await db.close()
    if names:
        await _drop(names, sidecar)


async def _drop(names: list[str], sidecar: EmbeddedSidecar) -> None:
    """The test's databases, gone with anything still connected to them."""
    admin = await asyncpg.connect(sidecar.dsn, database="postgres")
    try:
        for name in names:
            # Clean-up only: a database that cannot be dropped stays, as all did before.
            with contextlib.suppress(asyncpg.PostgresError):
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


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
