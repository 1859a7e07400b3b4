"""A real API server the tests did not write, run as a subprocess on loopback, behind a
small counting proxy, so a test knows exactly which requests the product sent:

    async with upstream([sys.executable, "-m", "httpbin.core", "--port", "{port}"],
                        ready="/get") as api:
        ...  # point the product at api.url; read api.requests afterwards

``{port}`` in the command is replaced by a free port. The proxy forwards every request
unchanged (method, path, query, headers, body) and records ``(method, path_and_query)``;
responses come back unchanged, except that absolute URLs the server writes into its
``Link``/``Location``/paging headers keep pointing at the proxy (the server is told its
public address through ``X-Forwarded-*`` where it honours them, and the proxy rewrites
the ones it does not)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import IO, Any

import httpx

from tests.fix_http import http_served
from tests.fix_server import free_port

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-authenticate", "content-length", "host"}


@dataclass
class Upstream:
    """One running server and its proxy."""
    url: str                       # the proxy's base URL: what the product is given
    origin: str                    # the server's own base URL (for the tests' set-up)
    requests: list[tuple[str, str]] = field(default_factory=list)

    def methods(self) -> set[str]:
        return {m for m, _ in self.requests}

    def clear(self) -> None:
        self.requests.clear()


def _proxy_app(target: str, record: list[tuple[str, str]], public: list[str]) -> Any:
    # No cookie jar: a cookie the server sets is the client's, never sent again by the
    # proxy on another client's request (a login cookie would let any request in).
    client = httpx.AsyncClient(base_url=target, timeout=60.0, cookies=CookieJar(
        policy=DefaultCookiePolicy(allowed_domains=[])))

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope.get("raw_path", scope["path"].encode()).decode()
        query = scope.get("query_string", b"").decode()
        target_path = path + (f"?{query}" if query else "")
        record.append((scope["method"], target_path))
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"]
                   if k.decode().lower() not in _HOP]
        headers += [("x-forwarded-host", public[0].split("//", 1)[1]),
                    ("x-forwarded-proto", "http")]
        answer = await client.request(scope["method"], target_path, headers=headers,
                                      content=body)
        out = [(k.encode(), v.replace(target, public[0]).encode())
               for k, v in answer.headers.items() if k.lower() not in _HOP]
        out.append((b"content-length", str(len(answer.content)).encode()))
        await send({"type": "http.response.start", "status": answer.status_code,
                    "headers": out})
        await send({"type": "http.response.body", "body": answer.content})

    app.aclose = client.aclose  # type: ignore[attr-defined]  # its connections, at the end
    return app


@asynccontextmanager
async def upstream(command: Sequence[str], ready: str = "/", *,
                   env: dict[str, str] | None = None, cwd: str | None = None,
                   start_timeout: float = 60.0) -> AsyncIterator[Upstream]:
    """Start ``command`` (``{port}`` filled in) and a counting proxy in front of it."""
    port = free_port()
    argv = [part.replace("{port}", str(port)) for part in command]
    # A file, not a pipe: a pipe nobody reads would fill and stall the server.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **(env or {})},
                                stdout=log, stderr=subprocess.STDOUT)
        origin = f"http://127.0.0.1:{port}"
        try:
            await _wait_ready(proc, log, origin + ready, start_timeout)
            record: list[tuple[str, str]] = []
            public: list[str] = [""]
            proxy = _proxy_app(origin, record, public)
            try:
                async with http_served(proxy) as url:
                    public[0] = url
                    yield Upstream(url=url, origin=origin, requests=record)
            finally:
                await proxy.aclose()
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def _wait_ready(proc: subprocess.Popen[bytes], log: IO[bytes], url: str,
                      timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    async with httpx.AsyncClient(timeout=2.0) as client:
        while True:
            if proc.poll() is not None:
                log.seek(0)
                err = log.read().decode(errors="replace")[-4000:]
                raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}:\n{err}")
            try:
                answer = await client.get(url)
                if answer.status_code < 500:
                    return
            except httpx.TransportError:
                pass
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"{url} did not answer within {timeout} s")
            await asyncio.sleep(0.1)


PYTHON = sys.executable
