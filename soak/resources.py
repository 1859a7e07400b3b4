"""The soak's resources: reads with latency and injected failures, and writes that
record each idempotency key they fire (to ``$SOAK_KEYS``, one line per call).

- ``soak_items``: 50 rows, 1-15 ms; 3% of calls raise ``TransientError`` (retried).
- ``soak_flaky``: 1-10 ms; 2% of calls fail for good (an expected 38000).
- ``soak_slow``: 300 ms, the target of the soak's cancels.
- ``soak_notes``: insert/update/delete, 1-20 ms; an insert titled ``fail…`` fails.
"""

from __future__ import annotations

import os
import random
import threading
import time

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, CallContext, TransientError, define_resource

STORE_SIZE = 1000  # notes kept (the oldest go), so the soak's RSS is the server's own
_lock = threading.Lock()
_store: dict[int, dict] = {}
_next = [1]


class Item(BaseModel):
    id: int = Field(description="Item id")
    name: str


class Note(BaseModel):
    id: int | None = Field(None, description="Assigned by the API on INSERT")
    title: str
    body: str = ""


def _record(ctx: CallContext, verb: str) -> None:
    path = os.environ.get("SOAK_KEYS")
    if path:
        with _lock, open(path, "a") as out:
            out.write(f"{ctx.idempotency_key}\t{verb}\n")


def _items(b: Bindings) -> list[Item]:
    time.sleep(random.uniform(0.001, 0.015))
    if random.random() < 0.03:
        raise TransientError("the items API is busy (429)")
    return [Item(id=i, name=f"item {i}") for i in range(1, 51)]


def _flaky(b: Bindings) -> list[Item]:
    time.sleep(random.uniform(0.001, 0.01))
    if random.random() < 0.02:
        raise RuntimeError("the flaky API failed")
    return [Item(id=i, name=f"flaky {i}") for i in range(1, 11)]


def _slow(b: Bindings) -> list[Item]:
    time.sleep(0.3)
    return [Item(id=1, name="slow")]


def _insert(rows: list[Note], ctx: CallContext) -> list[Note]:
    time.sleep(random.uniform(0.001, 0.02))
    if any(r.title.startswith("fail") for r in rows):
        raise RuntimeError("the notes API refused a title")
    made = []
    with _lock:
        for row in rows:
            note = row.model_copy(update={"id": _next[0]})
            _next[0] += 1
            _store[note.id] = note.model_dump()  # type: ignore[index]
            made.append(note)
        while len(_store) > STORE_SIZE:  # an API's memory is not the server's
            del _store[next(iter(_store))]
    _record(ctx, "insert")
    return made


def _select_notes(b: Bindings) -> list[dict]:
    with _lock:
        return list(_store.values())[-20:]


def _update(changes: dict, b: Bindings, ctx: CallContext) -> None:
    time.sleep(random.uniform(0.001, 0.02))
    with _lock:
        if b.one("id") in _store:
            _store[b.one("id")].update(changes)
    _record(ctx, "update")


def _delete(b: Bindings, ctx: CallContext) -> None:
    time.sleep(random.uniform(0.001, 0.02))
    with _lock:
        _store.pop(b.one("id"), None)
    _record(ctx, "delete")


resources = [
    define_resource("soak_items", schema=Item, primary_key=["id"], volatility="volatile",
                    select=_items, retries=3),
    define_resource("soak_flaky", schema=Item, volatility="volatile", select=_flaky),
    define_resource("soak_slow", schema=Item, volatility="volatile", select=_slow),
    define_resource("soak_notes", schema=Note, primary_key=["id"], volatility="volatile",
                    select=_select_notes, insert=_insert, update=_update, delete=_delete),
]
