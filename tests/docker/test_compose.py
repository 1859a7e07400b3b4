"""docker-compose.yml on a real engine, as README.md and docs/deploy.md run it: the
stand-in images and a wheelhouse handed to the unchanged file through its variables,
the build with no network, then psql and psycopg through the balancer's published
port. The tests share one project (``stack``) and run in this order.
"""

from __future__ import annotations

import subprocess
import threading

import psycopg
import pytest

from glove_scratchpad.server.net.state import instance_of

from .fix_docker import DEPLOY, Stack, run, until

pytestmark = pytest.mark.timeout(900)


def _psql(url: str, *commands: str) -> list[str]:
    argv = ["psql", url, "-XAt", "-v", "ON_ERROR_STOP=1"]
    for command in commands:
        argv += ["-c", command]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout.splitlines()


def test_up_serves_the_demo_tables_and_keeps_a_write(stack: Stack):
    assert stack.healthy("postgres", 1) and stack.healthy("server", 1)
    assert len(stack.containers("balancer")) == 1
    tables = _psql(stack.url, "SELECT table_name FROM information_schema.tables "
                              "WHERE table_schema = current_schema() ORDER BY 1")
    assert tables == ["emails", "images", "sky_stars", "tasks", "time", "web"]
    with psycopg.connect(stack.url, autocommit=True) as conn:
        hit = conn.execute("SELECT title FROM web WHERE query = 'postgres' LIMIT 1").fetchall()
        assert len(hit) == 1
        conn.execute("INSERT INTO tasks (title) VALUES ('ship the image')")
    with psycopg.connect(stack.url) as conn:  # a new connection reads it back
        titles = conn.execute("SELECT title FROM tasks").fetchall()
    assert ("ship the image",) in titles
    assert _psql(stack.url, "SELECT count(*) FROM tasks WHERE title = 'ship the image'") == ["1"]


def test_the_mounted_config_serves_an_api_with_a_secret_from_the_environment(stack: Stack):
    assert _psql(stack.url, "SELECT name FROM sky_stars ORDER BY name") == ["deneb", "vega"]
    with psycopg.connect(stack.url, autocommit=True) as conn:
        conn.execute("INSERT INTO sky_stars (name, magnitude) VALUES ('rigel', 0.13)")
    assert _psql(stack.url, "SELECT magnitude FROM sky_stars WHERE name = 'rigel'") == ["0.13"]
    # The token reached the server from GLOVE_ENV_FILE, not from the image.
    token = stack.env["SKY_TOKEN_FOR_TESTS"]
    (server,) = stack.containers("server")
    image = run(["docker", "inspect", "-f", "{{.Image}}", server]).stdout.strip()
    baked = run(["docker", "image", "inspect", "-f", "{{json .Config.Env}}", image]).stdout
    history = run(["docker", "history", "--no-trunc", image]).stdout
    assert token not in baked and token not in history and "SKY_TOKEN" not in baked


def test_the_servers_do_not_run_as_root(stack: Stack):
    for server in stack.containers("server"):
        top = run(["docker", "top", server, "-o", "pid,uid,args"]).stdout.splitlines()[1:]
        assert top, "no process in the server's container"
        assert all(line.split()[1] != "0" for line in top), top
        assert any("glove-scratchpad" in line for line in top), top


def _instances(stack: Stack, n: int) -> dict[int, psycopg.Connection] | None:
    """Connections through the balancer, one per server instance, when n answer."""
    found: dict[int, psycopg.Connection] = {}
    for _ in range(4 * n):
        conn = psycopg.connect(stack.url, autocommit=True, connect_timeout=10)
        conn.execute("SELECT 1")
        instance = instance_of(conn.info.backend_pid)
        if instance in found:
            conn.close()
        else:
            found[instance] = conn
    if len(found) == n:
        return found
    for conn in found.values():
        conn.close()
    return None


def _container_of(stack: Stack, instance: int) -> str:
    """The server container whose registered instance has that number."""
    (postgres,) = stack.containers("postgres")
    host = run(["docker", "exec", "-e", "PGPASSWORD=scratchpad", postgres, "psql", "-XAt",
                "-U", "scratchpad", "-d", "scratchpad", "-c",
                f"SELECT host FROM _gs_audit.instances WHERE id = {instance}"]).stdout.strip()
    (found,) = [c for c in stack.containers("server") if c.startswith(host)]
    return found


def test_three_replicas_share_one_database_and_lose_no_write(stack: Stack):
    stack.documented(DEPLOY, "docker compose up -d --build --scale server=3")
    until(lambda: stack.healthy("server", 3), "three healthy servers")
    conns = until(lambda: _instances(stack, 3), "three servers behind the balancer")
    try:
        _cancel_through_the_balancer(stack)
        owner, *others = sorted(conns)
        for conn in conns.values():  # one database: every server sees every write
            conn.execute(f"INSERT INTO sky_stars (name) VALUES ('star-{owner}')")
        seen = conns[others[0]].execute("SELECT count(*) FROM sky_stars WHERE name LIKE "
                                        "'star-%'").fetchone()
        assert seen == (3,)
    finally:
        for conn in conns.values():
            conn.close()

    # Two stopped: new connections still succeed through the balancer, once its
    # checks (every second) have seen them go.
    owners = {i: _container_of(stack, i) for i in conns}
    stopped = [owners[i] for i in others]
    run(["docker", "stop", *stopped])
    until(lambda: _connects_to(stack, owner), "the balancer sending to the one left",
          timeout=30)
    for _ in range(6):
        with psycopg.connect(stack.url, connect_timeout=30) as conn:
            assert instance_of(conn.info.backend_pid) == owner
            assert conn.execute("SELECT count(*) > 0 FROM web WHERE query = 'postgres'"
                                ).fetchone() == (True,)

    # A write on its way when its server is killed: journaled in the `postgres`
    # service, so it is reported, in doubt or fired, once the servers are back.
    committing = threading.Thread(target=_slow_write, args=(stack.url,), daemon=True)
    committing.start()
    with psycopg.connect(stack.url, autocommit=True) as watcher:
        until(lambda: watcher.execute(
            "SELECT status FROM scratchpad.journal WHERE statement LIKE '%slow-altair%'"
        ).fetchall() == [("firing",)], "the slow write firing")
    run(["docker", "kill", owners[owner]])
    committing.join(60)
    stack.documented(DEPLOY, "docker compose up -d --build --scale server=3")
    until(lambda: stack.healthy("server", 3), "three healthy servers again")
    with psycopg.connect(stack.url, autocommit=True, connect_timeout=30) as conn:
        journal = conn.execute("SELECT status FROM scratchpad.journal "
                               "WHERE statement LIKE '%slow-altair%'").fetchall()
        assert journal in ([("in doubt",)], [("fired",)])
        fired = conn.execute("SELECT count(*) FROM scratchpad.journal "
                             "WHERE statement LIKE '%star-%' AND status = 'fired'").fetchone()
        assert fired == (3,)


def _connects_to(stack: Stack, instance: int) -> bool:
    try:
        with psycopg.connect(stack.url, connect_timeout=10) as conn:
            return instance_of(conn.info.backend_pid) == instance
    except psycopg.OperationalError:
        return False


def _slow_write(url: str) -> None:
    """A COMMIT whose write the API takes a minute to make: its server dies meanwhile."""
    try:
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO sky_stars (name) VALUES ('slow-altair')")
            conn.commit()
    except psycopg.OperationalError:
        pass  # the server was killed under it: what the test wants


def _cancel_through_the_balancer(stack: Stack) -> None:
    """psql's Ctrl-C: a CancelRequest on a new connection, which the balancer (least
    connections) may take to another container; that one hands it to the owner."""
    with psycopg.connect(stack.url, autocommit=True) as conn:
        for _ in range(5):  # one that arrives before the statement runs is lost
            timer = threading.Timer(1.0, conn.cancel_safe)
            timer.start()
            try:
                conn.execute("SELECT count(*) FROM (SELECT generate_series(1, 300000000)) s")
            except psycopg.errors.QueryCanceled:
                return
            finally:
                timer.cancel()
        pytest.fail("no cancel reached the statement through the balancer")


def test_down_leaves_no_container_network_or_volume(stack: Stack):
    # The database's volume is the postgres image's (VOLUME): the engine names it.
    volumes = run(["docker", "inspect", "-f", "{{range .Mounts}}{{.Name}} {{end}}",
                   *stack.containers("postgres")]).stdout.split()
    assert volumes
    stack.documented(DEPLOY, "docker compose down -v")
    label = f"label=com.docker.compose.project={stack.project}"
    assert run(["docker", "ps", "-aq", "--filter", label]).stdout == ""
    assert run(["docker", "network", "ls", "-q", "--filter", label]).stdout == ""
    assert run(["docker", "volume", "ls", "-q", "--filter", label]).stdout == ""
    remaining = run(["docker", "volume", "ls", "-q"]).stdout.split()
    assert not set(volumes) & set(remaining)
