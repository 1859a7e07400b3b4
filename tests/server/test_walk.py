"""The walk of one SELECT through the rooms (docs/architecture.md), traced as it runs: a
driver's statement over the wire, from the socket to the reply. Each room is entered
once; every other entry is a call that returns a value to the room that made it.

The trace (``sys.setprofile``, new frames only) gives each call from one of the
package's files into another. Checked on it:
- no room of the engine calls back into the session (the circle the ``Statement``
  broke: the rooms once reached through it for its settings, its plan, its reads);
- no call goes up the layers (from the SQL layer, the catalog, the resources or the
  wire into the engine or the network layer) but the gate's and the planner's
  lookups, which return a value.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import asyncpg

from glove_scratchpad.resources import define_resource

from ..fix_server import dsn, serving

ROOT = Path(__file__).resolve().parents[2]
LOWER = ("server/sql/", "catalog/", "resources/", "glove_scratchpad/")
UPPER = ("server/engine/", "server/net/")
# The upward calls that return a value: the gate asks whether a name is a resource or a
# function, the planner what resource a name means.
LOOKUPS = {("server/sql/gate.py", "server/engine/runner.py", "<lambda>"),
           # the gate's entry for a session with temporary tables asks the same
           ("server/sql/temp_tables.py", "server/engine/runner.py", "<lambda>"),
           ("server/sql/analysis.py", "server/engine/statement.py", "lookup")}


def _ours(filename: str) -> str | None:
    path = Path(filename).resolve()
    try:
        rel = path.relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return rel if rel.startswith(("server/", "catalog/", "resources/", "glove_scratchpad/")) \
        else None


def _trace() -> tuple[list[tuple[str | None, str, str]], Any]:
    """(caller's file, callee's file, callee) of each new frame, and the profiler."""
    calls: list[tuple[str | None, str, str]] = []
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


async def test_one_select_enters_each_room_once(make_db):
    things = define_resource("things", columns=[("id", "bigint"), ("label", "text")],
                             keys=["id"], volatility="volatile",
                             select=lambda b: [{"id": b.one("id"), "label": "x"}])
    db = await make_db([things])
    async with serving(db) as server:
        conn = await asyncpg.connect(dsn(server))
        try:
            await conn.fetch("SELECT label FROM things WHERE id = 1")  # warm: pools, caches
            calls, profile = _trace()
            sys.setprofile(profile)
            try:
                rows = await conn.fetch("SELECT label FROM things WHERE id = 2")
            finally:
                sys.setprofile(None)
        finally:
            await conn.close()
    assert [tuple(r) for r in rows] == [("x",)]
    crossings = [(a, b, name) for a, b, name in calls if a is not None and a != b]
    entered = {b for _, b, _ in calls}
    # The walk went through every room it is said to.
    for room in ("server/net/connection.py", "server/engine/session.py",
                 "server/engine/resolve.py", "server/engine/sidecar.py", "server/sql/gate.py",
                 "server/sql/analysis.py", "catalog/_client.py"):
        assert room in entered, room
    into_session = [c for c in crossings if c[1] == "server/engine/session.py"
                    and c[0].startswith("server/engine/")]
    assert into_session == []
    upward = {c for c in crossings if c[0].startswith(LOWER) and c[1].startswith(UPPER)}
    assert upward <= LOOKUPS, upward - LOOKUPS
