"""An HTTP API of the credential tests' own: rows that say whose token fetched them,
and errors whose bodies echo the request's headers (as careless error pages do).

- ``GET /mine``: three rows, each naming the role whose bearer token asked.
- ``GET /many``: 500 such rows (a call large enough to be kept in a sidecar table).
- ``GET /echo/{code}``: the status ``code``, with a body that quotes every header.
- ``POST /notes``: a write refused with 400, its body quoting every header.
- ``GET /odd``: a row whose number is the request's authorization header.

``Seen`` counts the requests each token made, by path.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

TOKENS = {"alice-token-4f1c9e": "alice", "bob-token-8d2a7b": "bob",
          "shared-token-0c3e5f": "anyone"}


class Row(BaseModel):
    n: int
    owner: str


class Echoed(BaseModel):
    code: int
    said: str


class NoteIn(BaseModel):
    text: str


class Seen:
    """Requests by (path, token owner)."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()


def _owner(request: Request) -> str:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return TOKENS.get(token, "nobody")


def _echo(request: Request, code: int) -> JSONResponse:
    sent = ", ".join(f"{k}: {v}" for k, v in request.headers.items())
    return JSONResponse({"message": f"refused; you sent {sent}"}, status_code=code)


def make_app() -> tuple[FastAPI, Seen]:
    app = FastAPI(title="echo")
    seen = Seen()

    @app.get("/mine", operation_id="mine")
    def mine(request: Request) -> list[Row]:
        who = _owner(request)
        seen.requests["/mine", who] += 1
        return [Row(n=n, owner=who) for n in range(3)]

    @app.get("/many", operation_id="many")
    def many(request: Request) -> list[Row]:
        who = _owner(request)
        seen.requests["/many", who] += 1
        return [Row(n=n, owner=who) for n in range(500)]

    @app.get("/echo/{code}", operation_id="echo", response_model=Echoed)
    def echo(code: int, request: Request) -> Any:
        return _echo(request, code)

    @app.post("/notes", operation_id="notes", status_code=201, response_model=NoteIn)
    def notes(body: NoteIn, request: Request) -> Any:
        return _echo(request, 400)

    @app.get("/odd", operation_id="odd", response_model=list[Row])
    def odd(request: Request) -> Any:
        said = request.headers.get("authorization", "")
        return JSONResponse([{"n": said, "owner": "x"}])

    return app, seen
