"""The tests' own HTTP API, served from a container on the compose network: a list
of stars behind a bearer token (``SKY_TOKEN``), readable and writable, and its
OpenAPI document. A star named ``slow…`` takes ``SLOW_SECONDS`` to be written, so
that a test can stop a server while the write is on its way.

``python3 api.py`` serves on port 8080; ``python3 api.py --check`` is the health check.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = 8080
SLOW_SECONDS = 60
STAR = {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "magnitude": {"type": "number"}}}
DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "sky", "version": "1"},
    "servers": [{"url": f"http://api:{PORT}"}],
    "paths": {"/stars": {
        "get": {"operationId": "listStars", "responses": {"200": {
            "description": "the stars", "content": {"application/json": {
                "schema": {"type": "array", "items": STAR}}}}}},
        "post": {"operationId": "addStar", "requestBody": {"required": True, "content": {
            "application/json": {"schema": STAR}}}, "responses": {"201": {
                "description": "added", "content": {"application/json": {"schema": STAR}}}}},
    }},
}
stars = [{"name": "vega", "magnitude": 0.03}, {"name": "deneb", "magnitude": 1.25}]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _signed_in(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {os.environ['SKY_TOKEN']}":
            return True
        self._send(401, {"error": "a bearer token is needed"})
        return False

    def do_GET(self) -> None:
        if self.path == "/openapi.json":
            self._send(200, DOCUMENT)
        elif self.path.split("?")[0] == "/stars" and self._signed_in():
            with lock:
                self._send(200, list(stars))
        elif self.path.split("?")[0] != "/stars":
            self._send(404, {"error": "no such path"})

    def do_POST(self) -> None:
        if self.path != "/stars":
            self._send(404, {"error": "no such path"})
            return
        if not self._signed_in():
            return
        star = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if str(star.get("name", "")).startswith("slow"):
            time.sleep(SLOW_SECONDS)
        with lock:
            stars.append(star)
        self._send(201, star)

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("api: " + format % args + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        urllib.request.urlopen(f"http://127.0.0.1:{PORT}/openapi.json", timeout=2)
    else:
        # The container's first process: without a handler it would ignore SIGTERM,
        # and `docker compose down` would wait its 10 s for nothing.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        ThreadingHTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
