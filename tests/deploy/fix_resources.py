"""Resources for the deployment tests, also served by ``--resources`` from this file.

``make(prefix)`` builds a set whose answers name the server that gave them, so a
test can tell which server answered; ``resources`` is the default set (``notes``,
``greet`` and ``slow``) that the command-line servers serve.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, Resource, define_resource

SERVER = os.environ.get("GLOVE_TEST_SERVER", "")  # which server answered
SLOW_SECONDS = 30.0  # long enough that only a cancel ends a read of ``slow``


class Note(BaseModel):
    id: int | None = Field(None, description="Note id, assigned on INSERT")
    title: str
    body: str = ""


class Greeting(BaseModel):
    who: str = Field(description="Whom to greet (required)")
    text: str
    server: str


class Tick(BaseModel):
    n: int


def make(prefix: str = "", extra: bool = False) -> list[Resource]:
    """``notes`` (read and write, in memory), ``greet`` (a key), ``slow``; ``extra`` adds
    ``more``, so that the set differs."""
    store: dict[int, Note] = {1: Note(id=1, title="first", body=prefix)}

    def select_notes(b: Bindings) -> list[Note]:
        return list(store.values())

    def insert_notes(rows: list[Note]) -> list[Note]:
        made = []
        for row in rows:
            note = Note(id=max(store, default=0) + 1, title=row.title, body=row.body)
            store[note.id] = note  # type: ignore[index]
            made.append(note)
        return made

    def update_notes(changes: dict, b: Bindings) -> None:
        note = store[b.one("id")]
        store[note.id] = note.model_copy(update=changes)  # type: ignore[index]

    def greet(b: Bindings) -> list[Greeting]:
        who = b.one("who")
        return [Greeting(who=who, text=f"{prefix}hello {who}", server=SERVER or prefix)]

    async def slow(b: Bindings) -> list[Tick]:
        await asyncio.sleep(SLOW_SECONDS)
        return [Tick(n=1)]

    out = [
        define_resource("notes", schema=Note, primary_key=["id"], volatility="volatile",
                        description="Notes", select=select_notes, insert=insert_notes,
                        update=update_notes),
        define_resource("greet", schema=Greeting, keys=["who"], volatility="volatile",
                        description="A greeting", select=greet),
        define_resource("slow", schema=Tick, volatility="volatile",
                        description="Answers after a long time", select=slow),
    ]
    if extra:
        out.append(define_resource("more", columns=[("x", "bigint")], volatility="volatile",
                                   select=lambda b: [{"x": 1}]))
    return out


resources = make()
