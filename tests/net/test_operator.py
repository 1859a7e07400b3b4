"""The operator's HTTP port (``net/operator.py``), read with an HTTP client as an
orchestrator reads it: ``/healthz`` while the process serves, ``/readyz`` following what
the server says of itself (its reason in the body when not ready, a failing check counted
as not ready), ``/metrics`` in Prometheus's text format, and a 404 that names the paths."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from glove_scratchpad.server.net.operator import OperatorPort

from ..fix_metrics import counted


class Operator:
    """The port, started over a readiness check the test sets (``ready``)."""

    def __init__(self) -> None:
        self.ready: Callable[[], str | None] = lambda: None
        self.port = OperatorPort("127.0.0.1", 0, lambda: self.ready())

    async def get(self, path: str) -> tuple[int, str]:
        """The status and body of a GET, as an orchestrator's probe reads them."""
        def read() -> tuple[int, str]:
            url = f"http://127.0.0.1:{self.port.port}{path}"
            try:
                with urllib.request.urlopen(url) as reply:
                    return reply.status, reply.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()
        return await asyncio.to_thread(read)


@pytest.fixture
async def operator(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Operator]:
    counted(monkeypatch)  # metrics on for this test alone
    made = Operator()
    made.port.start()
    try:
        yield made
    finally:
        made.port.close()


async def test_healthz_and_readyz_when_ready(operator):
    assert await operator.get("/healthz") == (200, "ok\n")
    assert await operator.get("/readyz") == (200, "ready\n")


async def test_readyz_says_why_not(operator):
    operator.ready = lambda: "the sidecar does not answer"
    assert await operator.get("/readyz") == (503, "not ready: the sidecar does not answer\n")

    def broken() -> str | None:
        raise ConnectionRefusedError("no sidecar")

    operator.ready = broken
    assert await operator.get("/readyz") == (503, "not ready: ConnectionRefusedError: no sidecar\n")
    assert await operator.get("/healthz") == (200, "ok\n")  # alive all the same


async def test_metrics_in_prometheus_text_and_other_paths_named(operator):
    status, text = await operator.get("/metrics")
    assert status == 200
    names = {family.name for family in text_string_to_metric_families(text)}
    assert any(name.startswith("glove_") for name in names), names
    assert await operator.get("/nope") == (
        404, "/metrics, /healthz and /readyz are served here\n")
