"""The health checks (``health``): ``ping`` asks for the start of a session, ``ping
--ready`` reads the metrics port's ``/readyz``; each exits 0 or 1 and says why."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from glove_scratchpad.server.health import ping, ready

from ..fix_server import free_port


async def test_ping_is_answered_by_a_server(server):
    # The server runs on this loop: the blocking check runs beside it.
    assert await asyncio.to_thread(ping, "127.0.0.1", server.port) == 0
    assert await asyncio.to_thread(ping, "0.0.0.0", server.port) == 0  # this machine


def test_ping_is_the_health_check(capsys):
    port = free_port()
    assert ping("127.0.0.1", port) == 1  # nothing listens there
    assert f"no server on 127.0.0.1:{port}" in capsys.readouterr().err


def test_ping_of_something_else_than_postgres_says_so(capsys):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(8)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        thread = threading.Thread(target=answer)
        thread.start()
        assert ping("127.0.0.1", port) == 1
        thread.join()
    assert f"127.0.0.1:{port} is not a PostgreSQL server" in capsys.readouterr().err


@pytest.fixture
def readyz() -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """An HTTP port whose /readyz answers what the test puts first in its list."""
    answers: list[tuple[int, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = answers[0] if self.path == "/readyz" else (404, "no")
            self.send_response(status)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever)
    thread.start()
    try:
        yield httpd.server_address[1], answers
    finally:
        httpd.shutdown()
        thread.join()
        httpd.server_close()


def test_ready_reads_readyz_and_says_why_not(readyz, capsys):
    port, answers = readyz
    answers[:] = [(200, "ready\n")]
    assert ready("127.0.0.1", port) == 0
    answers[:] = [(503, "not ready: the sidecar does not answer\n")]
    assert ready("127.0.0.1", port) == 1
    assert capsys.readouterr().err == (
        "glove-scratchpad: not ready: the sidecar does not answer\n")


def test_ready_needs_the_metrics_port(monkeypatch, capsys):
    monkeypatch.delenv("GLOVE_SCRATCHPAD_METRICS_PORT", raising=False)
    assert ready("127.0.0.1", None) == 1
    assert "give --metrics-port" in capsys.readouterr().err
    port = free_port()
    assert ready("127.0.0.1", port) == 1
    assert f"no metrics port on 127.0.0.1:{port}" in capsys.readouterr().err
