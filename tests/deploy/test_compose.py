"""The compose topology without Docker: ``postgres``, three ``server`` replicas and
the ``balancer``, started with the commands and environment docker-compose.yml and
the Dockerfile give them, then psql and psycopg through the balancer.

What Docker would provide is provided the nearest way: each container's address
is a loopback address of its own, a service name is resolved by a small DNS (the
balancer's, as Docker's embedded one) or, for the servers' DSN, written as that
address. Postgres is the embedded wheel's 18, set up as the postgres image sets
itself up from the same variables.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from glove_scratchpad.server.net.state import instance_of

from .conftest import new_host
from .fix_compose import ROOT, dockerfile, services, start_dns
from .fix_postgres import Cluster, start_cluster

BIN = Path(sys.executable).parent
DNS_PORT = 5353
REPLICAS = 3


def _command(argv: list[str]) -> list[str]:
    """A command as the image runs it: its programs are the venv's."""
    program = BIN / argv[0]
    return [str(program) if program.exists() else argv[0], *argv[1:]]


async def _until(check, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            pytest.fail(f"{what} did not happen in {timeout}s")
        await asyncio.sleep(0.2)


async def _run(argv: list[str], env: dict[str, str]) -> int:
    proc = await asyncio.create_subprocess_exec(
        *argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return await proc.wait()


async def test_the_compose_topology_serves_one_database_from_three_servers():
    compose = services({})  # an empty .env: the compose file's defaults
    image = dockerfile()
    hosts = {name: new_host() for name in ("postgres", "dns", "balancer")}
    replicas = [new_host() for _ in range(REPLICAS)]
    procs: list[asyncio.subprocess.Process] = []
    cluster: Cluster | None = None
    dns = None
    try:
        # postgres: the image makes POSTGRES_USER a superuser with POSTGRES_PASSWORD,
        # makes POSTGRES_DB, and (POSTGRES_INITDB_ARGS) asks scram of every login.
        pg = compose["postgres"]["environment"]
        assert "--auth-host=scram-sha-256" in pg["POSTGRES_INITDB_ARGS"]
        cluster = await asyncio.to_thread(start_cluster, "18", hosts["postgres"],
                                          superuser=pg["POSTGRES_USER"],
                                          password=pg["POSTGRES_PASSWORD"])
        await cluster.execute(f'CREATE DATABASE "{pg["POSTGRES_DB"]}"')
        kind, check = compose["postgres"]["healthcheck"]["test"]
        assert kind == "CMD-SHELL"
        pg_env = {**pg, "PGHOST": str(cluster.socket_dir), "PGPORT": str(cluster.port),
                  "PATH": f"/usr/lib/postgresql/15/bin:{os.environ['PATH']}"}
        assert await _run(["sh", "-c", check], pg_env) == 0

        # server x3: the image's ENV, then the service's; the DSN's host `postgres`
        # is that service's address, and each replica listens on its own.
        service = compose["server"]
        argv = _command(image["ENTRYPOINT"] + (service.get("command") or image["CMD"]))
        base = {**image["ENV"], **service["environment"]}
        dsn = base["GLOVE_SCRATCHPAD_SIDECAR_DSN"]
        assert "@postgres:5432/" in dsn
        base["GLOVE_SCRATCHPAD_SIDECAR_DSN"] = dsn.replace("@postgres:", f"@{hosts['postgres']}:")
        # Each container has a loopback of its own: here, each replica its own address.
        envs = [{**base, "GLOVE_SCRATCHPAD_HOST": address,
                 "GLOVE_SCRATCHPAD_METRICS_HOST": address} for address in replicas]
        for env in envs:
            procs.append(await asyncio.create_subprocess_exec(
                *argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        kind, *health = service["healthcheck"]["test"]
        assert kind == "CMD" and health == image["HEALTHCHECK"]
        for env in envs:
            await _until(lambda env=env: _healthy(health, env), "a server's health check")

        # balancer: HAProxy with the mounted config and the service's environment;
        # its DNS answers the servers' service name with every replica.
        balancer = compose["balancer"]
        source, target, *_ = balancer["volumes"][0].split(":")
        assert target == "/usr/local/etc/haproxy/haproxy.cfg"
        benv = dict(balancer["environment"])
        dns = await start_dns(hosts["dns"], DNS_PORT, {benv["GLOVE_SERVERS"]: replicas})
        benv.update(DNS_SERVER=f"{hosts['dns']}:{DNS_PORT}", BIND_ADDR=hosts["balancer"])
        published, container_port = balancer["ports"][0].split(":")
        assert (published, container_port) == ("55432", "55432")
        procs.append(await asyncio.create_subprocess_exec(
            "haproxy", "-db", "-f", str(ROOT / source), env={**os.environ, **benv},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        user, password = base["GLOVE_SCRATCHPAD_USER"], base["GLOVE_SCRATCHPAD_PASSWORD"]
        url = f"postgresql://{user}:{password}@{hosts['balancer']}:{published}/scratchpad"
        await _until(lambda: _three_servers(url), "three servers behind the balancer")
        psql = await asyncio.create_subprocess_exec(
            "psql", url, "-XAtc", "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY 1", stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        out, err = await psql.communicate()
        assert (psql.returncode, err) == (0, b""), err
        assert out.decode().split() == ["emails", "images", "tasks", "time", "web"]
        await _cancel_through_the_balancer(url)
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if dns is not None:
            dns.close()
        if cluster is not None:
            await asyncio.to_thread(cluster.stop)
    assert [p.returncode for p in procs[:REPLICAS]] == [0] * REPLICAS  # SIGTERM: clean stops


async def _cancel_through_the_balancer(url: str) -> None:
    """psql's Ctrl-C: a CancelRequest on a new connection, which the balancer (least
    connections) takes to a server that does not own the session; it is handed over."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        running = asyncio.ensure_future(conn.execute(
            "SELECT count(*) FROM (SELECT generate_series(1, 300000000)) AS s"))
        await asyncio.sleep(0.5)
        while not running.done():  # one that arrives before the statement runs is lost
            await conn.cancel_safe()
            await asyncio.wait([running], timeout=3)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await running


async def _healthy(health: list[str], env: dict[str, str]) -> bool:
    return await _run(_command(health), env) == 0


async def _three_servers(url: str) -> bool:
    """Whether sessions through the balancer land on three servers (by their keys)."""
    conns = []
    try:
        for _ in range(2 * REPLICAS):
            conns.append(await psycopg.AsyncConnection.connect(url, autocommit=True))
        for conn in conns:
            cur = await conn.execute("SELECT title FROM web WHERE query = 'postgres' LIMIT 1")
            assert len(await cur.fetchall()) == 1
        # A key's process id starts with the instance number of the server that owns it.
        servers = {instance_of(conn.info.backend_pid) for conn in conns}
        return len(servers) == REPLICAS
    except psycopg.OperationalError:
        return False
    finally:
        for conn in conns:
            await conn.close()


def test_the_commands_are_quoted_for_a_shell():
    """The postgres health check is a shell line: it must split the way sh splits it."""
    _, check = services({})["postgres"]["healthcheck"]["test"]
    assert shlex.split(check)[0] == "pg_isready"
