"""The operator's HTTP port (``--metrics-port``): ``/metrics``, ``/healthz``, ``/readyz``.

Rules:
- Off unless a port is given; bound to loopback unless ``--metrics-host`` says
  otherwise: the metrics name resources and roles.
- ``/metrics`` is prometheus-client's own exposition (its handler, content
  negotiation and compression included) of ``metrics.registry()``: this process's
  metrics, or every worker's under ``--workers``.
- ``/healthz`` answers 200 while the process serves HTTP at all; ``/readyz`` 200
  only while ``ready()`` says the server can answer a statement (the sidecar
  answers, the catalog is installed), else 503 with the reason in the body.
- The port serves from threads of its own (stdlib ``http.server``), so a scrape
  never waits on the event loop and a busy loop never fails a liveness probe;
  ``ready`` is called from such a thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from glove_scratchpad import metrics

__all__ = ["OperatorPort"]

log = logging.getLogger(__name__)


class OperatorPort:
    """The HTTP port an operator's Prometheus and orchestrator read."""

    def __init__(self, host: str, port: int, ready: Callable[[], str | None]) -> None:
        """``ready()``: None when the server is ready, else why not (one line)."""
        from prometheus_client.exposition import MetricsHandler

        metrics.enable()
        base: Any = MetricsHandler.factory(metrics.registry())

        class Handler(base):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    super().do_GET()
                elif path == "/healthz":
                    self._text(200, "ok\n")
                elif path == "/readyz":
                    try:
                        why = ready()
                    except Exception as exc:  # a check that fails is a server not ready
                        why = f"{type(exc).__name__}: {exc}"
                    self._text(200, "ready\n") if why is None else self._text(
                        503, f"not ready: {why}\n")
                else:
                    self._text(404, "/metrics, /healthz and /readyz are served here\n")

            def _text(self, status: int, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("operator port: " + format, *args)

        self._http = ThreadingHTTPServer((host, port), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever,
                                        name="glove-scratchpad-operator", daemon=True)

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(5)
