"""A wire server over the typed resource, and direct (oracle) connections to the sidecar."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_scratchpad.server import Database

from ..fix_server import dsn, serving
from .types_resource import round_trip_resources, typed_resource

DATABASE = "test_fidelity"


@pytest.fixture(scope="session")
async def fidelity_server(sidecar: Any) -> AsyncIterator[Any]:
    db = await Database.create([typed_resource(), *round_trip_resources()], writes=True,
                               sidecar=sidecar, database=DATABASE)
    try:
        async with serving(db, writes=True) as srv:
            yield srv
    finally:
        await db.close()


@pytest.fixture
def fidelity_dsn(fidelity_server: Any) -> str:
    return dsn(fidelity_server)


@pytest.fixture
def direct_kwargs(sidecar: Any, fidelity_server: Any) -> dict[str, Any]:
    """psycopg.connect() keywords for the sidecar itself (the oracle)."""
    return {"host": sidecar.host, "port": sidecar.port, "user": sidecar.user,
            "password": sidecar.password, "dbname": DATABASE}
