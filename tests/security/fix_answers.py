"""A hostile HTTP API of the tests' own whose answers, not its document, are the attack:
a plain asyncio HTTP server on loopback that records every request line as it arrived
(``asked``: method and raw target) and answers by path.

Its document (``/openapi.json``) serves everything under ``/api/v1``:

- ``/users``, ``/users/{uid}`` (GET, DELETE) and ``/repos/{owner}/{repo}/issues``: plain
  tables, for path parameters that try to climb out of ``/api/v1``;
- ``/bomb``: 2 MB of gzip that decompresses to ``BOMB_BYTES``; ``/endless``: a chunked
  array that never ends;
- ``/cursor``: a next cursor that is always ``same``; ``/linked``: a ``Link`` whose
  next page is the page itself;
- ``/typed?kind=…``: one row whose fields break the column types as ``TYPED`` says;
- ``/hosted``: an operation that declares ``Host`` (and ``X-Trace``) header parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

BOMB_BYTES = 1000 * 2**20  # what the bomb decompresses to: far past any limit
# case -> the row /typed answers: each but "good" sends a value of another JSON type
# than its column's (n bigint, b boolean, t timestamptz, s text).
TYPED: dict[str, dict[str, Any]] = {
    "good": {"n": 12, "b": True, "t": "2024-05-01T12:00:00Z", "s": "x"},
    "bool_as_bigint": {"n": True},
    "yes_as_boolean": {"b": "yes"},
    "one_as_boolean": {"b": 1},
    "off_as_boolean": {"b": "off"},
    "epoch_as_timestamp": {"t": 1714564800},
    "padded_bigint": {"n": " 12 "},
    "object_as_text": {"s": {"a": 1}},
}
_ROW = {"type": "object", "properties": {"uid": {"type": "string"}, "name": {
    "type": "string"}}}


def _list(op: str, params: list[dict[str, Any]] | None = None,
          schema: dict[str, Any] | None = None, headers: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": "ok", "content": {"application/json": {
        "schema": schema or {"type": "array", "items": _ROW}}}}
    if headers:
        answer["headers"] = headers
    return {"get": {"operationId": op, "parameters": params or [],
                    "responses": {"200": answer}}}


def _param(name: str, where: str = "query", required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required or where == "path",
            "schema": {"type": "string"}}


def document(base: str) -> dict[str, Any]:
    typed_row = {"type": "object", "properties": {
        "n": {"type": "integer"}, "b": {"type": "boolean"},
        "t": {"type": "string", "format": "date-time"}, "s": {"type": "string"}}}
    return {"openapi": "3.0.3", "info": {"title": "answers", "version": "1"},
            "servers": [{"url": base}], "paths": {
        "/users": _list("users"),
        "/users/{uid}": {**_list("getUser", [_param("uid", "path")], _ROW), "delete": {
            "operationId": "deleteUser", "parameters": [_param("uid", "path")],
            "responses": {"204": {"description": "gone"}}}},
        "/repos/{owner}/{repo}/issues": _list(
            "issues", [_param("owner", "path"), _param("repo", "path")]),
        "/bomb": _list("bomb"),
        "/endless": _list("endless"),
        "/cursor": _list("cursor", [_param("cursor")], {"type": "object", "properties": {
            "items": {"type": "array", "items": _ROW},
            "next_cursor": {"type": "string"}}}),
        "/linked": _list("linked", headers={"Link": {"schema": {"type": "string"}}}),
        "/typed": _list("typed", [_param("kind", required=True)],
                        {"type": "array", "items": typed_row}),
        "/hosted": _list("hosted", [_param("Host", "header"), _param("X-Trace", "header"),
                                    _param("Content-Length", "header")]),
    }}


@functools.cache
def bomb() -> bytes:
    """``BOMB_BYTES`` of spaces as gzip (about 1 MB): a block deflated after a full flush
    deflates to the same bytes each time, so it is made once and repeated."""
    block = b" " * 2**20
    count = BOMB_BYTES // len(block)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + first + again * (count - 1)
            + packer.flush() + struct.pack("<II", crc, BOMB_BYTES & 0xFFFFFFFF))


@dataclass
class Answers:
    """The server: ``url``, and every request as ``(method, target, headers)``."""

    url: str = ""
    asked: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def targets(self) -> list[str]:
        """The raw targets of the API's requests (the document's left out)."""
        return [t for _, t, _ in self.asked if t != "/openapi.json"]


def _head(status: str, kind: str = "application/json", **extra: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {kind}", "Connection: close"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _json(status: str, value: Any, **extra: str) -> bytes:
    body = json.dumps(value).encode()
    return _head(status, Content_Length=str(len(body)), **extra) + body


async def _answer(api: Answers, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        method, target = head.split(" ", 2)[:2]
        headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
        api.asked.append((method, target, headers))
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        if path == "/openapi.json":
            writer.write(_json("200 OK", document(api.url + "/api/v1")))
        elif path == "/api/v1/bomb":
            body = bomb()
            writer.write(_head("200 OK", Content_Encoding="gzip",
                               Content_Length=str(len(body))) + body)
        elif path == "/api/v1/endless":
            writer.write(_head("200 OK", Transfer_Encoding="chunked"))
            piece = b'{"uid": "u", "name": "' + b"n" * 60_000 + b'"},'
            chunk = b"%x\r\n" % len(piece) + piece + b"\r\n"
            writer.write(b"1\r\n[\r\n")
            while True:  # until the client goes
                writer.write(chunk)
                await writer.drain()
                await asyncio.sleep(0.001)
        elif path == "/api/v1/cursor":
            writer.write(_json("200 OK", {"items": [{"uid": "1", "name": "one"}],
                                          "next_cursor": "same"}))
        elif path == "/api/v1/linked":
            writer.write(_json("200 OK", [{"uid": "1", "name": "one"}],
                               Link=f'<{api.url}/api/v1/linked>; rel="next"'))
        elif path == "/api/v1/typed":
            case = query.get("kind", ["good"])[0]
            writer.write(_json("200 OK", [{**TYPED["good"], **TYPED.get(case, {})}]))
        elif path == "/api/v1/hosted":
            writer.write(_json("200 OK", [{"uid": "h", "name": headers.get("Host", "")}]))
        elif path == "/api/v1/users":
            writer.write(_json("200 OK", [{"uid": "1", "name": "one"}]))
        elif path.startswith("/api/v1/users/") and method == "GET":
            uid = unquote(path.rsplit("/", 1)[1])
            writer.write(_json("200 OK", {"uid": uid, "name": "some"}))
        elif path.startswith("/api/v1/users/") and method == "DELETE":
            writer.write(_head("204 No Content", Content_Length="0"))
        elif path.startswith("/api/v1/repos/"):
            writer.write(_json("200 OK", []))
        else:  # outside the API: what a climbing path would reach
            writer.write(_json("200 OK", [{"uid": "outside", "name": "outside"}]))
        await writer.drain()
    except (OSError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def answers_served() -> AsyncIterator[Answers]:
    api = Answers()
    server = await asyncio.start_server(lambda r, w: _answer(api, r, w), "127.0.0.1", 0)
    api.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield api
        server.close()
