"""An OTLP/HTTP receiver of the tests' own: it decodes what a server exports (the protobuf
of opentelemetry-proto) and keeps the spans."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def otlp_receiver(host: str = "127.0.0.1") -> Iterator[tuple[str, list[Any]]]:
    """An OTLP/HTTP receiver of our own: yields (its traces URL, the spans it got)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    spans: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest.FromString(body)
            spans.extend(s for r in request.resource_spans for ss in r.scope_spans
                         for s in ss.spans)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    http = ThreadingHTTPServer((host, 0), Handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{http.server_address[1]}/v1/traces", spans
    finally:
        http.shutdown()
        http.server_close()
