"""A hostile HTTP API of the tests' own, and a trap: a plain asyncio HTTP server on
loopback that serves OpenAPI documents an upstream the user does not control might
serve (one trickles a byte at a time), and a listener that counts whoever connects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

# A summary that ends its quote where backslashes are not escapes, then runs DDL.
INJECTION = "x\\'; CREATE TABLE public.pwned AS SELECT current_user; --"


def document(paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "hostile", "version": "1"}, "paths": paths,
            "components": {"schemas": schemas or {}}}


def list_of(schema: dict[str, Any], op: str = "list", summary: str = "",
            path: str = "/items") -> dict[str, Any]:
    """One GET whose rows are items of ``schema``."""
    return {path: {"get": {"operationId": op, "summary": summary, "responses": {"200": {
        "description": "ok", "content": {"application/json": {"schema": {
            "type": "array", "items": schema}}}}}}}}


def exponential(depth: int = 20, options: int = 8) -> dict[str, Any]:
    """Rows that are unions of references, nested ``depth`` deep (a few KB)."""
    schemas: dict[str, Any] = {f"d{depth}": {"type": "object", "properties": {
        "v": {"type": "string"}}}}
    for d in range(depth):
        schemas[f"d{d}"] = {"anyOf": [{"$ref": f"#/components/schemas/d{d + 1}"}
                                      for _ in range(options)]}
    return document(list_of({"$ref": "#/components/schemas/d0"}), schemas)


def alias_bomb() -> str:
    """A billion laughs: 9 levels of 9 aliases (under 1 KB of YAML), the last one the
    enum of a column, whose values its comment lists."""
    lines = ['openapi: "3.0.3"', "info: {title: bomb, version: '1'}",
             'x0: &x0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, 9):
        lines.append(f"x{n}: &x{n} [" + ", ".join([f"*x{n - 1}"] * 9) + "]")
    lines += ["paths:", "  /items:", "    get:", "      responses:", "        '200':",
              "          description: ok", "          content:", "            application/json:",
              "              schema:", "                type: array", "                items:",
              "                  type: object", "                  properties:",
              "                    v: {type: string, enum: *x8}"]
    return "\n".join(lines) + "\n"


@dataclass
class Hostile:
    """The server: ``url``, the paths asked for, and the documents it serves."""

    url: str = ""
    asked: list[str] = field(default_factory=list)
    documents: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # path -> type, body

    def serve_json(self, path: str, value: Any) -> None:
        self.documents[path] = ("application/json", json.dumps(value).encode())

    def serve_text(self, path: str, text: str, kind: str = "application/yaml") -> None:
        self.documents[path] = (kind, text.encode())


SLOW = "/slow.json"  # a document served one byte every half second, never to its end


async def _answer(hostile: Hostile, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    try:
        request = await reader.readuntil(b"\r\n\r\n")
        path = request.split(b" ", 2)[1].decode()
        hostile.asked.append(path)
        if path == SLOW:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000000\r\n\r\n{")
            while True:
                await writer.drain()
                await asyncio.sleep(0.5)
                writer.write(b" ")
        found = hostile.documents.get(path)
        if found is None:
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        else:
            kind, body = found
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: "
                         f"{len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def hostile_served() -> AsyncIterator[Hostile]:
    hostile = Hostile()
    server = await asyncio.start_server(lambda r, w: _answer(hostile, r, w), "127.0.0.1", 0)
    hostile.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield hostile
        server.close()


@dataclass
class Trap:
    """A host no configuration names: ``url``, and how many connections it saw."""

    url: str = ""
    connections: int = 0


@contextlib.asynccontextmanager
async def trap_listening() -> AsyncIterator[Trap]:
    trap = Trap()

    def seen(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        trap.connections += 1
        writer.close()

    server = await asyncio.start_server(seen, "127.0.0.1", 0)
    trap.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield trap

