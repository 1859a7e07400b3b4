"""Staged writes as COMMIT will send them: a change to a row the transaction itself staged
is folded into the INSERT that staged it. No I/O.

A row a staged INSERT adds has no values the tool assigns (its id) until COMMIT, so
a later UPDATE or DELETE of the same transaction cannot name it to the tool. Such a
change is staged as a *fold*: a ``Call`` whose ``staged_row`` is (the INSERT's write
id, the row's number in it), holding the row's new values (an update) or none (a
delete). ``pending`` applies the folds in order:

- the INSERT sends its rows with every fold applied, and without the rows a fold
  deleted;
- a fold is never a call of its own: a write left with no call once its folds are
  applied is not sent (COMMIT says it was folded);
- the writes are new objects, and the staged list is never changed, so ROLLBACK TO a
  savepoint drops a fold with the write that staged it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .context import CallArgs
from .result import Call, StagedWrite

__all__ = ["folded_into", "pending", "sent", "staged_rows", "staged_view_rows"]


def pending(staged: Sequence[StagedWrite]) -> list[StagedWrite]:
    """The writes COMMIT sends, in order, with the folds applied."""
    rows: dict[int, list[Any]] = {}  # insert write id -> its rows (None: deleted)
    for write in staged:
        for call in write.calls:
            if call.staged_row is None:
                if call.verb == "insert":
                    rows.setdefault(write.id, []).extend(call.rows)
                continue
            target, index = call.staged_row
            found = rows.get(target)
            if found is not None and index < len(found):
                found[index] = call.rows[0] if call.verb == "update" else None
    out = []
    for write in staged:
        calls = []
        for call in write.calls:
            if call.staged_row is not None:
                continue
            if call.verb == "insert" and write.id in rows:
                kept = tuple(r for r in rows[write.id] if r is not None)
                if not kept:
                    continue
                call = dataclasses.replace(call, rows=kept)
            calls.append(call)
        if calls or not write.calls:
            out.append(write if calls == write.calls else dataclasses.replace(write,
                                                                                calls=calls))
    return out


def folded_into(write: StagedWrite) -> list[int]:
    """The writes a write's folds change (their ids, in order)."""
    return list(dict.fromkeys(c.staged_row[0] for c in write.calls if c.staged_row))


def staged_rows(staged: Sequence[StagedWrite], resource: str
                ) -> list[tuple[tuple[int, int], Any]]:
    """The rows the transaction's INSERTs into ``resource`` add, folds applied, each
    with the (write id, row number) a fold names it by."""
    out: dict[tuple[int, int], Any] = {}
    for write in staged:
        if write.resource != resource:
            continue
        numbered = 0  # rows are numbered across the write's insert calls, as in pending
        for call in write.calls:
            if call.staged_row is None and call.verb == "insert":
                for row in call.rows:
                    out[(write.id, numbered)] = row
                    numbered += 1
            elif call.staged_row is not None and call.staged_row in out:
                if call.verb == "update":
                    out[call.staged_row] = call.rows[0]
                else:
                    del out[call.staged_row]
    return list(out.items())


def sent(call: Call) -> dict[str, Any]:
    """What one call gives its tool: an insert's rows; an update's changes; an update's
    or delete's bindings (keys, and the filters' conditions, as the audit shows them)."""
    if call.verb == "insert":
        return {"rows": [_as_dict(r) for r in call.rows]}
    out: dict[str, Any] = {"changes": dict(call.changes or {})} if call.verb == "update" else {}
    out["bindings"] = CallArgs(dict(call.bindings or {}), call.where or {}).shown()
    return out


def staged_view_rows(staged: Sequence[StagedWrite],
                     why: Callable[[str, str], str | None] | None = None
                     ) -> list[dict[str, Any]]:
    """``scratchpad.staged``: one row per staged write with what COMMIT will send for it
    (folds applied): its rows, changes and bindings, one element per call; the writes
    whose returned rows it is planned again from, at COMMIT (a chain's); and ``why``
    (resource, verb) it needs approval, if it does."""
    sending = {w.id: w for w in pending(staged)}
    out = []
    for write in staged:
        now = sending.get(write.id)
        calls = [sent(c) for c in now.calls] if now is not None else []
        into = folded_into(write)
        after = write.link.after() if write.link is not None and write.link.deferred else []
        status = write.status if now is not None else (
            "folded into " + ", ".join(f"#{i}" for i in into))
        if after and now is not None:
            status += ("; planned again at COMMIT from the rows "
                       + ", ".join(f"#{i}" for i in after) + " return")
        out.append({
            "id": write.id, "resource": write.resource, "verb": write.verb,
            "statement": write.statement, "calls": write.summary, "status": status,
            "rows": [r for c in calls for r in c.get("rows", ())] or None,
            "changes": [c["changes"] for c in calls if "changes" in c] or None,
            "bindings": [c["bindings"] for c in calls if "bindings" in c] or None,
            "depends_on": after or None,
            "approval": None if why is None or now is None else why(write.resource,
                                                                    write.verb),
        })
    return out


def _as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(by_alias=True) if hasattr(row, "model_dump") else dict(row)
