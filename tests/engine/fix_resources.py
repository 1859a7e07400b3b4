"""Resources for interpreter tests: each counts its calls, per verb and arguments."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, Resource, define_resource


class Recorder:
    """Counts calls by (verb, arguments) and keeps every write's input, in order."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.writes: list[tuple[str, Any]] = []

    def record(self, verb: str, args: Any) -> None:
        self.calls[(verb, json.dumps(args, sort_keys=True, default=str))] += 1

    def total(self, verb: str = "select") -> int:
        return sum(n for (v, _), n in self.calls.items() if v == verb)


class Pr(BaseModel):
    number: int = Field(description="PR number")
    title: str
    merged: bool
    base: str = "main"


PRS = [
    Pr(number=1, title="Add parser", merged=True),
    Pr(number=2, title="Fix wire bug", merged=False),
    Pr(number=3, title="Docs", merged=True, base="docs"),
]


def github_pr(rec: Recorder, volatility: str = "stable") -> Resource:
    def select(b: Bindings) -> list[Pr]:
        rec.record("select", b.as_dict())
        return list(PRS)  # ignores every filter: Postgres must apply them

    return define_resource(
        "github_pr", schema=Pr, primary_key=["number"], volatility=volatility,  # type: ignore[arg-type]
        filters=["number", "merged", "base"], description="Pull requests", select=select,
    )


class Note(BaseModel):
    id: int | None = None
    title: str
    body: str = ""


def notes(rec: Recorder, initial: list[Note] | None = None, pk: bool = True) -> Resource:
    store: dict[int, Note] = {n.id: n for n in initial or []}  # type: ignore[misc]

    def select(b: Bindings) -> list[Note]:
        rec.record("select", b.as_dict())
        return list(store.values())

    def insert(rows: list[Note]) -> list[Note]:
        rec.record("insert", [r.model_dump() for r in rows])
        rec.writes.append(("insert", [r.title for r in rows]))
        out = []
        for row in rows:
            note = row.model_copy(update={"id": row.id or max(store, default=0) + 1})
            store[note.id] = note  # type: ignore[index]
            out.append(note)
        return out

    def update(changes: dict, b: Bindings) -> None:
        rec.record("update", {"changes": changes, **b.as_dict()})
        rec.writes.append(("update", (changes, b.as_dict())))
        store[b.one("id")] = store[b.one("id")].model_copy(update=changes)

    def delete(b: Bindings) -> None:
        rec.record("delete", b.as_dict())
        rec.writes.append(("delete", b.as_dict()))
        store.pop(b.one("id"), None)

    return define_resource(
        "notes", schema=Note, primary_key=["id"] if pk else [], volatility="volatile",
        select=select, insert=insert, update=update, delete=delete,
    )


class Hit(BaseModel):
    query: str = Field(description="Search terms")
    title: str


def search(rec: Recorder, volatility: str = "volatile") -> Resource:
    def select(b: Bindings) -> list[dict]:
        rec.record("select", b.as_dict())
        q = b.one("query")
        return [{"title": f"{q} result {i}"} for i in (1, 2)]  # `query` stamped by the server

    return define_resource(
        "search", schema=Hit, keys=["query"], volatility=volatility,  # type: ignore[arg-type]
        select=select,
    )
