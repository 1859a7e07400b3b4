"""The document's own fetch carries the API's credentials to the document's origin only:
a redirect (or a reference) to another origin that ``allow_refs`` lets it reach is
fetched without them. Two small HTTP servers of the test's own, on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glove_scratchpad.resources.openapi import OpenApiBridge

from ..fix_http import http_served

DOCUMENT = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9/api"}], "paths": {"/things": {"get": {
                "operationId": "things", "responses": {"200": {
                    "description": "ok", "content": {"application/json": {"schema": {
                        "type": "array", "items": {"type": "object", "properties": {
                            "id": {"type": "integer"}}}}}}}}}}}}


def _app(seen: list[tuple[str, str | None]], redirect: str | None) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        seen.append((scope["path"], (headers.get(b"authorization") or b"").decode() or None))
        if redirect is not None:
            start = {"status": 302, "headers": [(b"location", redirect.encode()),
                                                (b"content-length", b"0")]}
            body = b""
        else:
            body = json.dumps(DOCUMENT).encode()
            start = {"status": 200, "headers": [(b"content-type", b"application/json")]}
        await send({"type": "http.response.start", **start})
        await send({"type": "http.response.body", "body": body})

    return app


async def test_the_credentials_go_to_the_documents_origin_only():
    home: list[tuple[str, str | None]] = []
    away: list[tuple[str, str | None]] = []
    async with http_served(_app(away, None)) as elsewhere, \
            http_served(_app(home, f"{elsewhere}/openapi.json")) as url:
        bridge = OpenApiBridge([{
            "namespace": "d", "spec": f"{url}/openapi.json", "allow_refs": [elsewhere],
            "headers": {"Authorization": "Bearer home-only-secret"}}], Path("."))
        try:
            assert [r.name for r in await bridge.load()] == ["d_things"]
        finally:
            await bridge.aclose()
    assert home == [("/openapi.json", "Bearer home-only-secret")]
    assert away == [("/openapi.json", None)]
