"""The operator's port (``--metrics-port``), read by the tools operators run: a real
Prometheus scrapes a server of two workers and counts exactly what a known workload did;
``/readyz`` follows the sidecar down and back up; workers start on a port whose last
connections are in TIME-WAIT."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import psycopg
import pytest

from glove_scratchpad.server.net.state import worker_of

from ..fix_cli import cli_server
from ..fix_otlp import otlp_receiver
from ..fix_server import free_port
from .conftest import new_host
from .fix_postgres import start_cluster

FIXTURE = str(Path(__file__).with_name("fix_resources.py"))
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


@contextlib.asynccontextmanager
async def _server(*args: str, env: dict[str, str] | None = None,
                  out: list[str] | None = None) -> AsyncIterator[list[str]]:
    """``glove-scratchpad serve`` of the deploy resources, on a sidecar of its own, with
    ``args``; its log lines (and its output lines in ``out``)."""
    data = tempfile.mkdtemp(prefix="gso-")  # short: the sidecar's socket path is in it
    try:
        async with cli_server("--resources", FIXTURE, "--sidecar-dir", f"{data}/pg", *args,
                              env=env) as running:
            if out is not None:
                out[:0] = running.out
            yield running.log
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@contextlib.contextmanager
def _prometheus(host: str, target: str):
    """A real Prometheus scraping ``target`` every second; yields its query URL."""
    if not Path(PROMETHEUS).exists():
        pytest.fail("prometheus is not installed: make test installs it (apt-get)")
    home = Path(tempfile.mkdtemp(prefix="gsprom-"))
    (home / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs: [{{job_name: glove, static_configs: [{{targets: ['{target}']}}]}}]\n")
    port = free_port(host)
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={home / 'prometheus.yml'}",
         f"--storage.tsdb.path={home / 'data'}", f"--web.listen-address={host}:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://{host}:{port}/api/v1/query"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)


def _query(api: str, promql: str) -> float | None:
    """The value of an instant query with one result, None while it has none."""
    try:
        status, body = _get(api + "?" + urllib.parse.urlencode({"query": promql}))
    except OSError:  # Prometheus is still starting
        return None
    if status != 200:
        return None
    result = json.loads(body)["data"]["result"]
    return float(result[0]["value"][1]) if result else None


async def _settled(api: str, promql: str, want: float, timeout: float = 60) -> float | None:
    """The query's value once Prometheus has scraped it as ``want`` (or the last seen)."""
    seen = None
    async with asyncio.timeout(timeout):
        while True:
            seen = await asyncio.to_thread(_query, api, promql)
            if seen == want:
                return seen
            await asyncio.sleep(0.5)


async def test_prometheus_counts_exactly_what_two_workers_did():
    host = new_host()
    metrics_port = free_port(host)
    async with _server("--workers", "2", "--host", host, "--port", "55432",
                       "--metrics-host", host, "--metrics-port", str(metrics_port)):
        assert _get(f"http://{host}:{metrics_port}/healthz") == (200, "ok\n")
        assert _get(f"http://{host}:{metrics_port}/readyz") == (200, "ready\n")
        url = f"postgresql://agent@{host}:55432/scratchpad"
        owners = set()
        reads = errors = 0
        async with asyncio.timeout(60):
            while owners != {0, 1} or reads < 8:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                    owners.add(worker_of(conn.info.backend_pid))
                    rows = await (await conn.execute(
                        "SELECT text FROM greet WHERE who = %s", (f"n{reads}",))).fetchall()
                    assert rows == [(f"hello n{reads}",)]
                    reads += 1
                    with pytest.raises(psycopg.errors.UndefinedTable):
                        await conn.execute("SELECT * FROM nowhere")
                    errors += 1
        with _prometheus(host, f"{host}:{metrics_port}") as api:
            # One scrape of the supervisor sees both workers' counts, exactly.
            assert await _settled(api, 'sum(glove_statements_total{kind="SELECT",'
                                  'outcome="00"})', reads) == reads
            assert await _settled(api, 'sum(glove_statements_total{outcome="42"})',
                                  errors) == errors
            assert await _settled(api, 'sum(glove_tool_calls_total{resource="greet",'
                                  'verb="select",outcome="ok"})', reads) == reads
            assert await _settled(api, 'sum(glove_tool_call_rows_total{resource="greet"})',
                                  reads) == reads
            assert await _settled(api, 'sum(glove_statement_duration_seconds_count{'
                                  'kind="SELECT"})', reads + errors) == reads + errors
            assert await _settled(api, "sum(glove_connections)", 0) == 0  # all closed


def _samples(host: str, port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by (name, labels)."""
    from prometheus_client.parser import text_string_to_metric_families

    status, body = _get(f"http://{host}:{port}/metrics")
    assert status == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


async def test_one_process_counts_sessions_transactions_and_writes():
    host = new_host()
    metrics_port = free_port(host)
    async with _server("--host", host, "--port", "55432", "--writes", "--metrics-host", host,
                       "--metrics-port", str(metrics_port)):
        url = f"postgresql://agent@{host}:55432/scratchpad"
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO notes (title) VALUES ('a'), ('b')")
            during = _samples(host, metrics_port)
            await conn.execute("COMMIT")
            after = _samples(host, metrics_port)
        async with asyncio.timeout(10):  # the server sees the client go a moment later
            while (closed := _samples(host, metrics_port))[("glove_sessions", ())]:
                await asyncio.sleep(0.05)
    assert during[("glove_sessions", ())] == during[("glove_connections", ())] == 1
    assert during[("glove_open_transactions", ())] == 1
    assert during[("glove_writes_total", (("outcome", "staged"), ("resource", "notes")))] == 1
    assert ("glove_writes_total", (("outcome", "fired"), ("resource", "notes"))) not in during
    assert after[("glove_open_transactions", ())] == 0
    assert after[("glove_writes_total", (("outcome", "fired"), ("resource", "notes")))] == 1
    assert after[("glove_tool_calls_total", (("outcome", "ok"), ("resource", "notes"),
                                             ("verb", "insert")))] == 1
    assert after[("glove_statements_total", (("kind", "COMMIT"), ("outcome", "00")))] == 1
    assert closed[("glove_sessions", ())] == closed[("glove_connections", ())] == 0


async def test_ping_ready_takes_the_metrics_port_on_its_command_line():
    host = new_host()
    metrics_port = free_port(host)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLOVE_SCRATCHPAD_")}

    async def ping(*args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "glove_scratchpad.server.cli", "ping", *args, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        return proc.returncode or 0, err.decode()

    async with _server("--host", host, "--port", "55432", "--metrics-host", host,
                       "--metrics-port", str(metrics_port)):
        assert await ping("--ready", "--metrics-host", host, "--metrics-port",
                          str(metrics_port)) == (0, "")
    status, err = await ping("--ready", "--metrics-host", host, "--metrics-port",
                             str(metrics_port))
    assert status == 1 and err.startswith(f"glove-scratchpad: no metrics port on {host}:"
                                          f"{metrics_port}"), err


async def test_readyz_follows_the_sidecar_down_and_back():
    cluster = await asyncio.to_thread(start_cluster, "18", new_host())
    try:
        host = new_host()
        metrics_port = free_port(host)
        async with _server("--host", host, "--port", "55432", "--metrics-host", host,
                           "--metrics-port", str(metrics_port), "--sidecar-dsn",
                           cluster.dsn()):
            ready = f"http://{host}:{metrics_port}/readyz"
            assert _get(ready) == (200, "ready\n")
            await asyncio.to_thread(cluster.halt)
            status, body = _get(ready)
            assert status == 503, body
            assert body.startswith("not ready: the sidecar does not answer"), body
            assert _get(f"http://{host}:{metrics_port}/healthz") == (200, "ok\n")
            await asyncio.to_thread(cluster.resume)
            seen = []
            async with asyncio.timeout(60):
                while (answer := _get(ready)) != (200, "ready\n"):
                    seen.append(answer)
                    if len(seen) > 100:
                        raise AssertionError(seen[-3:])
                    await asyncio.sleep(0.2)
    finally:
        await asyncio.to_thread(cluster.stop)


async def test_workers_start_on_a_port_whose_connections_are_in_time_wait():
    host = new_host()
    with socket.socket() as listener:  # a server that closes first leaves TIME-WAIT
        # As every asyncio server's (a glove-scratchpad that just stopped): SO_REUSEADDR,
        # which its TIME-WAIT connections keep.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, 55432))
        listener.listen()
        client = socket.create_connection((host, 55432))
        accepted, _ = listener.accept()
        accepted.close()
        client.recv(1)
        client.close()
    assert any(c.laddr.port == 55432 and c.status == psutil.CONN_TIME_WAIT
               for c in psutil.net_connections("tcp4") if c.laddr and c.laddr.ip == host)
    async with _server("--workers", "2", "--host", host, "--port", "55432") as log:
        url = f"postgresql://agent@{host}:55432/scratchpad"
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert await (await conn.execute("SELECT 1")).fetchone() == (1,)
        assert not any("Traceback" in line for line in log)


async def test_the_banners_connect_line_connects_as_the_server_requires():
    host = new_host()
    metrics_port = free_port(host)
    out: list[str] = []
    async with _server("--host", host, "--port", "55432", "--metrics-host", host,
                       "--metrics-port", str(metrics_port), out=out,
                       env={"GLOVE_SCRATCHPAD_USER": "ann", "GLOVE_SCRATCHPAD_PASSWORD": "pw"}):
        banner = "".join(out)
        assert f"metrics:  http://{host}:{metrics_port}/metrics" in banner
        line = next(x for x in out if "connect:" in x).split("connect:", 1)[1].strip()
        assert line == f"psql -h {host} -p 55432 -d scratchpad -U ann"
        done = await asyncio.to_thread(
            subprocess.run, [*shlex.split(line), "-XAtc", "SHOW session_authorization"],
            capture_output=True, text=True, timeout=30, env={**os.environ, "PGPASSWORD": "pw"})
        assert (done.returncode, done.stdout.strip()) == (0, "ann"), done.stderr


async def test_json_logs_one_event_per_statement_with_no_values():
    host = new_host()
    async with _server("--host", host, "--port", "55432", "--log-format", "json",
                       "--slow-statement-s", "0.3",
                       env={"GLOVE_SCRATCHPAD_LOG_STATEMENT_TEXT": "none"}) as log:
        url = f"postgresql://agent@{host}:55432/scratchpad"
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute("SELECT text FROM greet WHERE who = 'zebra42'")
            with pytest.raises(psycopg.errors.UndefinedTable):
                await conn.execute("SELECT * FROM nowhere WHERE secret = 'zebra43'")
            running = asyncio.ensure_future(conn.execute("SELECT * FROM slow"))
            await asyncio.sleep(0.6)
            await conn.cancel_safe()
            with pytest.raises(psycopg.errors.QueryCanceled):
                await running
        await asyncio.sleep(0.3)  # the last lines reach the pipe
        events = [json.loads(line) for line in log]  # every line is one JSON object
    ends = [e for e in events if e.get("event") in ("statement", "slow_statement")]
    assert [(e["kind"], e["outcome"], e["calls"], e["user"]) for e in ends] == [
        ("SELECT", "00", 1, "agent"), ("SELECT", "42", 0, "agent"),
        ("SELECT", "57", 1, "agent")]
    assert [e["event"] for e in ends] == ["statement", "statement", "slow_statement"]
    assert ends[2]["level"] == "WARNING" and ends[2]["duration_ms"] >= 300
    assert len({e["statement"] for e in ends}) == 3 and all(
        e["session"] == ends[0]["session"] for e in ends)
    assert not any("zebra4" in line for line in log)  # no values, no SQL text
    assert not any("query" in e for e in ends)  # log_statement_text = "none"
    assert not any("FROM" in line for line in log)


async def test_json_mode_writes_only_json_and_a_slow_end_names_its_resource(tmp_path):
    """Every line of a JSON-mode run parses (the banner, a warning, the statements' ends,
    the shutdown), and a statement's end says what ran, with no value."""
    warns = tmp_path / "warns.py"
    warns.write_text("import warnings\nwarnings.warn('an old way of doing it')\n"
                     "resources = []\n")
    host = new_host()
    data = tempfile.mkdtemp(prefix="gsj-")
    try:
        async with cli_server("--resources", FIXTURE, str(warns), "--sidecar-dir",
                              f"{data}/pg", "--host", host, "--port", "55432",
                              "--log-format", "json", "--slow-statement-s", "0.3") as running:
            url = f"postgresql://agent@{host}:55432/scratchpad"
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                await conn.execute("SELECT text FROM greet WHERE who = 'zebra42'")
                reading = asyncio.ensure_future(conn.execute("SELECT n FROM slow"))
                await asyncio.sleep(0.6)
                await conn.cancel_safe()
                with pytest.raises(psycopg.errors.QueryCanceled):
                    await reading
            running.proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                assert await running.proc.wait() == 0
            await asyncio.sleep(0.3)  # the last lines reach the pipes
            out = [json.loads(line) for line in running.out if line.strip()]
            log = [json.loads(line) for line in running.log]
    finally:
        shutil.rmtree(data, ignore_errors=True)
    assert [(e["event"], e["level"]) for e in out] == [("ready", "INFO"),
                                                       ("shutting_down", "INFO")]
    assert "connect:  psql -h" in out[0]["message"]
    assert any(e["logger"] == "py.warnings" and "an old way of doing it" in e["message"]
               for e in log)
    ends = [e for e in log if e.get("event") in ("statement", "slow_statement")]
    assert [(e["query"], e["resources"], e["calls"], e["rows"]) for e in ends] == [
        ("SELECT text FROM greet WHERE who = $1", ["greet"], 1, 1),
        ("SELECT n FROM slow", ["slow"], 1, None)]
    assert ends[1]["event"] == "slow_statement"
    assert ends[1]["message"].endswith(": SELECT n FROM slow [slow]")
    assert not any("zebra4" in json.dumps(e) for e in log)  # no value


async def test_a_start_after_kill_9_recovers_the_sidecar_in_one_line():
    host = new_host()
    data = tempfile.mkdtemp(prefix="gsk-")
    argv = [sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--host", host,
            "--port", "55432", "--sidecar-dir", f"{data}/pg"]
    try:
        first = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        assert first.stdout is not None
        async with asyncio.timeout(60):
            while b"connect:" not in await first.stdout.readline():
                pass
        first.kill()  # kill -9: its sidecar's postmaster lives on
        await first.wait()
        second = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert second.stdout is not None and second.stderr is not None
        async with asyncio.timeout(60):
            while b"connect:" not in await second.stdout.readline():
                assert second.returncode is None
        url = f"postgresql://agent@{host}:55432/scratchpad"
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert await (await conn.execute("SELECT 1")).fetchone() == (1,)
        second.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            err = (await second.stderr.read()).decode()
            assert await second.wait() == 0
        lines = [line for line in err.splitlines() if line.strip()]
        # One line, about the first server's sidecar: the clean stop of its own is quiet.
        assert len([line for line in lines if "left running" in line]) == 1, err
        assert "Traceback" not in err and " ERROR " not in err, err
    finally:
        for proc in psutil.process_iter(["cmdline"]):
            if data in " ".join(proc.info["cmdline"] or ()):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        shutil.rmtree(data, ignore_errors=True)


async def test_a_join_of_two_tools_is_one_statement_span_with_two_call_spans():
    host = new_host()
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with otlp_receiver(host) as (endpoint, spans):
        async with _server("--host", host, "--port", "55432", "--otlp-endpoint", endpoint,
                           env={"OTEL_BSP_SCHEDULE_DELAY": "100"}):
            url = f"postgresql://agent@{host}:55432/scratchpad"
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                await conn.execute(f"SET glove.traceparent = '00-{trace_id}-{parent_id}-01'")
                rows = await (await conn.execute(
                    "SELECT n.title, g.text FROM notes n JOIN greet g ON g.who = n.title "
                    "WHERE n.title = 'first'")).fetchall()
                assert rows == [("first", "hello first")]
                with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                    await conn.execute("SELECT 'zebra9'::int")
            async with asyncio.timeout(20):
                while len([s for s in spans if s.trace_id.hex() == trace_id]) < 4:
                    await asyncio.sleep(0.1)
    ours = [s for s in spans if s.trace_id.hex() == trace_id]
    assert not any(b"zebra9" in s.SerializeToString() for s in ours)  # no value, anywhere
    [failed] = [s for s in ours if {a.key: a.value for a in s.attributes}.get(
        "db.response.status_code") is not None]
    assert {a.key: a.value for a in failed.attributes}[
        "db.response.status_code"].string_value == "22P02"
    [statement] = [s for s in ours if s.parent_span_id.hex() == parent_id
                   and s is not failed]
    attributes = {a.key: a.value for a in statement.attributes}
    assert statement.name == "SELECT"
    assert attributes["db.system"].string_value == "postgresql"
    assert attributes["db.user"].string_value == "agent"
    assert "'first'" not in attributes["db.statement"].string_value  # normalized: no values
    assert "$1" in attributes["db.statement"].string_value
    calls = sorted(s.name for s in ours if s.parent_span_id == statement.span_id)
    assert calls == ["greet select", "notes select"]
    greet = next(s for s in ours if s.name == "greet select")
    names = {a.key: a.value for a in greet.attributes}["glove.arguments"]
    assert [v.string_value for v in names.array_value.values] == ["who"]
