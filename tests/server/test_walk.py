"""The walk of a statement through the rooms (docs/architecture.md), traced as it runs:
a driver's statement over the wire, from the socket to the reply, for each way a
statement goes: a join of two resources, an INSERT inside BEGIN, the COMMIT that fires
it, a cursor's FETCH and a COPY each way.

The trace (``sys.setprofile``, new frames only) gives each call from one of the
package's files into another; the caller is the nearest frame in one of them. Each
file belongs to a folder (``server/engine``, ``server/sql``, ``server/net``,
``catalog``, ``resources``, ``glove_scratchpad/wire``, ``glove_scratchpad`` …).
Checked on it:
- the rooms said to be on a join's walk are entered;
- no room of the engine calls back into the session (the circle the ``Statement``
  broke: the rooms once reached through it for its settings, its plan, its reads);
- no two folders call each other both ways: the engine asks ``server/sql`` and takes
  its answer, and ``server/sql`` never calls back into the engine (the gate and the
  planner get the names a session sees as data).

Each statement is warmed with another text first (pools, caches), and the text traced
is new: a text seen before is answered from its record and skips the gate and the
planner, which would hide the walk this checks.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import psycopg
from pydantic import BaseModel

from glove_scratchpad.resources import define_resource

from ..fix_server import dsn, serving

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("server/", "catalog/", "resources/", "glove_scratchpad/")
# The rooms a join's walk goes through.
JOIN_ROOMS = ("server/net/connection.py", "server/engine/session.py",
              "server/engine/resolve.py", "server/engine/sidecar.py", "server/sql/gate.py",
              "server/sql/analysis.py", "catalog/_client.py")

Call = tuple[str | None, str, str]  # (caller's file, callee's file, callee)


class Note(BaseModel):
    id: int | None = None
    title: str
    points: int = 0


def _ours(filename: str) -> str | None:
    path = Path(filename).resolve()
    try:
        rel = path.relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return rel if rel.startswith(TOPS) else None


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0]


def _trace() -> tuple[list[Call], Any]:
    """(caller's file, callee's file, callee) of each new frame, and the profiler."""
    calls: list[Call] = []
    seen: set[int] = set()
    frames: list[Any] = []  # kept alive, so that no frame's id is used twice

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event != "call" or id(frame) in seen:
            return  # a coroutine resumed, not a new call
        callee = _ours(frame.f_code.co_filename)
        if callee is None:
            return
        seen.add(id(frame))
        frames.append(frame)
        back = frame.f_back
        while back is not None and _ours(back.f_code.co_filename) is None:
            back = back.f_back
        caller = _ours(back.f_code.co_filename) if back is not None else None
        calls.append((caller, callee, frame.f_code.co_name))

    return calls, profile


async def _traced(work: Callable[[], Awaitable[Any]]) -> list[Call]:
    calls, profile = _trace()
    sys.setprofile(profile)
    try:
        await work()
    finally:
        sys.setprofile(None)
    return calls


def two_way(calls: list[Call]) -> list[str]:
    """Each pair of folders that call each other both ways, with the calls of each
    direction (``caller -> callee:function``)."""
    by_pair: dict[tuple[str, str], set[str]] = {}
    for caller, callee, name in calls:
        if caller is None or _folder(caller) == _folder(callee):
            continue
        by_pair.setdefault((_folder(caller), _folder(callee)), set()).add(
            f"{caller} -> {callee}:{name}")
    found = []
    for (a, b), there in sorted(by_pair.items()):
        back = by_pair.get((b, a))
        if a < b and back:
            found.append(f"{a} <-> {b}: {sorted(there)} and back {sorted(back)}")
    return found


def _resources() -> list[Any]:
    store: dict[int, Note] = {1: Note(id=1, title="first"), 2: Note(id=2, title="second")}

    def insert(rows: list[Note]) -> list[Note]:
        made = []
        for row in rows:
            note = row.model_copy(update={"id": len(store) + 1})
            store[note.id] = note  # type: ignore[index]
            made.append(note)
        return made

    notes = define_resource("notes", schema=Note, primary_key=["id"], volatility="volatile",
                            select=lambda b: list(store.values()), insert=insert,
                            stateful=True)
    things = define_resource("things", columns=[("id", "bigint"), ("label", "text")],
                             keys=["id"], volatility="volatile",
                             select=lambda b: [{"id": b.one("id"), "label": f"x{b.one('id')}"}])
    return [notes, things]


async def test_no_two_folders_call_each_other_both_ways(make_db):
    db = await make_db(_resources())
    walks: dict[str, list[Call]] = {}
    async with serving(db, writes=True) as server:
        conn = await asyncpg.connect(dsn(server))
        pconn = await psycopg.AsyncConnection.connect(dsn(server), autocommit=True)
        try:
            join = ("SELECT n.title, t.label FROM notes n JOIN things t ON t.id = n.id "
                    "WHERE n.title <> '{}' ORDER BY n.id")
            await conn.fetch(join.format("warm"))
            walks["join"] = await _traced(lambda: conn.fetch(join.format("traced")))

            insert = "INSERT INTO notes (title) VALUES ('{}')"
            async with conn.transaction():
                await conn.execute(insert.format("warm"))
            await conn.execute("BEGIN")
            walks["insert in BEGIN"] = await _traced(
                lambda: conn.execute(insert.format("traced")))
            # The COMMIT of that INSERT: a spelling of COMMIT not seen before.
            walks["COMMIT"] = await _traced(lambda: conn.execute("commit"))

            declare = "DECLARE {} CURSOR FOR SELECT label FROM things WHERE id = 3"
            async with conn.transaction():
                await conn.execute(declare.format("warm_c"))
                await conn.fetch("FETCH 2 FROM warm_c")
            async with conn.transaction():
                await conn.execute(declare.format("traced_c"))
                walks["FETCH"] = await _traced(lambda: conn.fetch("FETCH 1 FROM traced_c"))

            async def copy_out(literal: str) -> None:
                async with pconn.cursor().copy(
                        f"COPY (SELECT label FROM things WHERE id = {literal}) TO STDOUT"
                ) as copy:
                    async for _ in copy:
                        pass

            async def copy_in(columns: str) -> None:
                async with pconn.cursor().copy(f"COPY notes ({columns}) FROM STDIN") as copy:
                    await copy.write_row(("copied", 1) if "," in columns else ("copied",))

            await copy_out("4")
            walks["COPY TO"] = await _traced(lambda: copy_out("5"))
            await copy_in("title")
            walks["COPY FROM"] = await _traced(lambda: copy_in("title, points"))
            rows = await conn.fetch("SELECT title FROM notes ORDER BY id")
        finally:
            await pconn.close()
            await conn.close()
    assert [r[0] for r in rows] == ["first", "second", "warm", "traced", "copied", "copied"]

    for what, calls in walks.items():
        assert calls, what
        crossings = [(a, b, name) for a, b, name in calls if a is not None and a != b]
        into_session = [c for c in crossings if c[1] == "server/engine/session.py"
                        and c[0].startswith("server/engine/")]
        assert into_session == [], (what, into_session)
    entered = {b for _, b, _ in walks["join"]}
    for room in JOIN_ROOMS:
        assert room in entered, room
    found = {what: pairs for what, calls in walks.items() if (pairs := two_way(calls))}
    assert found == {}, "\n".join(f"{what}: {pair}" for what, pairs in found.items()
                                  for pair in pairs)
