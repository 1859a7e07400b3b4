"""The one access layer to the sidecar: asyncpg's errors told as ``errors.*``, and the
one reconnect policy, against the session's real sidecar (and a port nobody serves).
Its behaviour over a sidecar restart, for every path, is test_access_restart.py's."""

from __future__ import annotations

import socket

import asyncpg
import pytest

from glove_scratchpad import errors
from glove_scratchpad.catalog import Sidecar, reconnecting, translate, unreachable
from glove_scratchpad.catalog._access import Access


async def _pool(sidecar: Sidecar) -> asyncpg.Pool:
    return await asyncpg.create_pool(host=sidecar.host, port=sidecar.port, user=sidecar.user,
                                     password=sidecar.password, database="postgres",
                                     min_size=1, max_size=1)


async def test_an_error_of_the_sidecar_is_the_errors_class_of_its_sqlstate(sidecar):
    pool = await _pool(sidecar)
    try:
        access = Access(pool, "other")
        with pytest.raises(errors.SqlError) as caught:
            await access.fetch("SELECT 1 / 0")
        assert caught.value.sqlstate == "22012"
        assert caught.value.message == "division by zero"
        with pytest.raises(errors.UniqueViolation) as caught:
            await access.execute(
                "CREATE TEMPORARY TABLE t (a int PRIMARY KEY); INSERT INTO t VALUES (1), (1)")
        assert caught.value.sqlstate == "23505"
        assert caught.value.detail == "Key (a)=(1) already exists."
    finally:
        await pool.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_sidecar_that_stays_unreachable_is_08006_with_a_hint_after_the_wait():
    port = _free_port()
    tries = []

    async def connect() -> None:
        tries.append(1)
        await asyncpg.connect(host="127.0.0.1", port=port, user="x", database="x")

    with pytest.raises(errors.ConnectionFailure) as caught:
        await reconnecting(connect, wait=0.5)
    assert len(tries) > 1  # tried again, with backoff, within the wait
    assert caught.value.sqlstate == "08006"
    assert caught.value.message.startswith("could not connect to the sidecar")
    assert caught.value.hint == ("The sidecar is down or restarting, and the server keeps "
                                 "trying. Run the statement again in a moment.")


async def test_only_an_unreachable_sidecar_is_waited_for(sidecar):
    pool = await _pool(sidecar)
    tries = []

    async def refused() -> None:
        tries.append(1)
        await pool.fetch("SELECT nope")

    try:
        with pytest.raises(errors.SqlError) as caught:
            await reconnecting(refused)
        assert len(tries) == 1 and caught.value.sqlstate == "42703"
        assert not unreachable(caught.value)
        shutdown = translate(asyncpg.AdminShutdownError("terminating connection"))
        assert unreachable(shutdown) and shutdown.sqlstate == "08006"
        assert unreachable(ConnectionRefusedError())
    finally:
        await pool.close()


async def test_a_closed_pool_is_not_waited_for(sidecar):
    pool = await _pool(sidecar)
    access = Access(pool, "audit")
    await pool.close()  # the server closing: nothing of its own comes back
    with pytest.raises(errors.ConnectionFailure) as caught:
        await access.fetch("SELECT 1")
    # Told at once ("could not reach"), not after the wait ("could not connect").
    assert caught.value.message.startswith("could not reach the sidecar: ")
