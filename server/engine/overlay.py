"""Read-your-writes: what a session's writes changed, laid over later reads.

Rules:
- Fired writes: rows are matched by the resource's primary key (a resource
  without one has no such overlay). A fired INSERT adds its rows (as the tool
  returned them, else as given) to the reads that could return them; an UPDATE
  patches the row its key names; a DELETE hides it. Each lasts until the tool's
  own rows confirm it, or until its window has passed, whichever comes first:
  - a read whose rows hold the inserted row, or the updated row with the written
    values, retires it;
  - a read that could have returned a deleted row (no limit, and the row's known
    keys and filter values meet the call's arguments) and did not retires the
    deletion;
  - once the window has passed, reads show exactly what the tool returns. An API
    that is eventually consistent has had its time by then, and a change made by
    another path (another session, the API itself) is never hidden for longer.
  The window is the resource's ``read_your_writes_s``, else the server's
  (``Limits.read_your_writes_s``); ``0`` turns the fired overlay off.
- Staged writes, inside a transaction: a read of a resource sees what the
  transaction has staged, in order, folds applied (``staged.pending``). Staged
  INSERT rows appear (the values the tool assigns are NULL until COMMIT); with a
  primary key, a staged UPDATE shows its new values and a staged DELETE hides its
  row; without one, only inserts are shown. ROLLBACK (or ROLLBACK TO) drops them
  with the writes, since they are read from the transaction itself.
- A read that either overlay changed gets a NOTICE naming the writes, and EXPLAIN
  says which overlays apply.
- Postgres applies the statement's predicates after the overlay, so a row that
  does not match them is not returned.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from glove_scratchpad.resources import Resource

from .context import CallArgs
from .result import Call, Notice, StagedWrite
from .staged import pending
from .transaction import Transaction, TxState

__all__ = ["Overlay", "as_dict"]


def as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(by_alias=True) if hasattr(row, "model_dump") else dict(row)


@dataclass(slots=True)
class _Fired:
    """One fired write's effect on one row, until the tool shows it or ``until``."""

    kind: str  # "row" (inserted), "patch" (updated) or "deleted"
    data: dict[str, Any]  # the row, the changes, or what is known of the deleted row
    write: int  # the fired write's id (#n)
    until: float  # time.monotonic() when it goes whatever the tool shows


class Overlay:
    """Per resource, per primary key: a fired write's row, patch or deletion; and the
    staged writes of the session's transaction."""

    def __init__(self, tx: Transaction | None = None, window: float = 0.0) -> None:
        self._fired: dict[str, dict[tuple[Any, ...], _Fired]] = {}
        self._tx = tx
        self.window = window  # the server's read_your_writes_s

    def window_of(self, resource: Resource) -> float:
        own = getattr(resource, "read_your_writes_s", None)
        return self.window if own is None else float(own)

    def remember(self, resource: Resource, call: Call, out: Any, write: int) -> None:
        """A write fired (#``write``): lay it over this session's reads for a while."""
        pk = resource.primary_key
        window = self.window_of(resource)
        if not pk or window <= 0:
            return
        fired = self._fired.setdefault(resource.name, {})
        until = time.monotonic() + window
        if call.verb == "insert":
            rows = out if isinstance(out, list | tuple) and out else [as_dict(r)
                                                                       for r in call.rows]
            for row in resource.validate_rows(list(rows)):
                if all(row.get(k) is not None for k in pk):
                    fired[tuple(row[k] for k in pk)] = _Fired("row", row, write, until)
            return
        bindings = call.bindings or {}
        if not all(k in bindings for k in pk):
            return
        key = tuple(bindings[k] for k in pk)
        if call.verb == "delete":
            fired[key] = _Fired("deleted", dict(bindings), write, until)
            return
        entry = fired.get(key)
        changes = dict(call.changes or {})
        if entry is not None and entry.kind in ("row", "patch"):
            fired[key] = _Fired(entry.kind, {**entry.data, **changes}, write, until)
        else:
            fired[key] = _Fired("patch", changes, write, until)

    def apply(self, resource: Resource, rows: list[dict], calls: Sequence[CallArgs]
              ) -> tuple[list[dict], list[Notice]]:
        """The rows a read of ``resource`` (made by ``calls``) sees: fired writes, then
        staged ones; and the NOTICEs of what they changed."""
        notices = []
        rows, notice = self._apply_fired(resource, rows, calls)
        if notice is not None:
            notices.append(notice)
        staged = self._staged(resource.name)
        if staged:
            rows, notice = _apply_staged(resource, rows, staged)
            if notice is not None:
                notices.append(notice)
        return rows, notices

    def touches(self, resource: str) -> bool:
        """Whether this session's fired or staged writes change reads of ``resource``."""
        return bool(self._live(resource)) or bool(self._staged(resource))

    def explain_lines(self, resources: Iterable[str]) -> list[str]:
        """What EXPLAIN says of the writes that reads of these resources see."""
        lines = []
        now = time.monotonic()
        for name in dict.fromkeys(resources):
            fired = self._live(name)
            if fired:
                ids = ", ".join(f"#{i}" for i in sorted({e.write for e in fired.values()}))
                left = max(e.until for e in fired.values()) - now
                lines.append(f"Overlay: reads of {name} see this session's fired writes "
                             f"{ids} until the tool's rows show them (at most {left:.1f} s "
                             "more: read_your_writes_s)")
            staged = self._staged(name)
            if staged:
                ids = ", ".join(f"#{w.id}" for w in staged)
                lines.append(f"Overlay: reads of {name} see this transaction's staged "
                             f"writes {ids} (not fired yet)")
        return lines

    def _live(self, resource: str) -> dict[tuple[Any, ...], _Fired]:
        """The fired writes of a resource whose window has not passed."""
        fired = self._fired.get(resource)
        if not fired:
            return {}
        now = time.monotonic()
        for key in [k for k, e in fired.items() if e.until <= now]:
            del fired[key]
        return fired

    def _staged(self, resource: str) -> list[StagedWrite]:
        tx = self._tx
        if tx is None or tx.state is TxState.IDLE or not tx.staged:
            return []
        return [w for w in pending(tx.staged) if w.resource == resource]

    def _apply_fired(self, resource: Resource, rows: list[dict], calls: Sequence[CallArgs]
                     ) -> tuple[list[dict], Notice | None]:
        fired = self._live(resource.name)
        if not fired:
            return rows, None
        pk = resource.primary_key
        out, seen = [], set()
        laid: dict[str, set[int]] = {"inserted": set(), "updated": set(), "deleted": set()}
        for row in rows:
            key = tuple(row.get(k) for k in pk)
            seen.add(key)
            entry = fired.get(key)
            if entry is None:
                out.append(row)
            elif entry.kind == "deleted":
                laid["deleted"].add(entry.write)  # the tool still has it: hidden
            elif entry.kind == "row" or all(row.get(c) == v for c, v in entry.data.items()):
                del fired[key]  # the tool shows the write: it retires
                out.append(row)
            else:
                out.append({**row, **entry.data})
                laid["updated"].add(entry.write)
        for key, entry in list(fired.items()):
            if key in seen:
                continue
            if entry.kind == "row" and any(_could_return(c, entry.data, strict=False)
                                           for c in calls):
                out.append(dict(entry.data))
                laid["inserted"].add(entry.write)
            elif entry.kind == "deleted" and any(_could_return(c, entry.data, strict=True)
                                                 for c in calls):
                del fired[key]  # the tool no longer returns it: the deletion retires
        if not any(laid.values()):
            return out, None
        return out, _fired_notice(resource, laid, self.window_of(resource))


def _meets(value: Any, op: str, arg: Any) -> bool | None:
    """Whether a value meets a condition, as SQL would; None when Python cannot say."""
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return False
    try:
        if op == "in":
            return value in arg
        if op == "=":
            return bool(value == arg)
        if op == "<>":
            return bool(value != arg)
        if op == "<":
            return bool(value < arg)
        if op == "<=":
            return bool(value <= arg)
        if op == ">":
            return bool(value > arg)
        if op == ">=":
            return bool(value >= arg)
    except TypeError:
        pass  # values Python cannot compare
    return None  # LIKE, ILIKE


def _could_return(call: CallArgs, values: dict[str, Any], *, strict: bool) -> bool:
    """Whether a call's arguments admit a row of these values. ``strict``: only when
    every argument is known to admit it (so its absence says the row is gone), and the
    call has no limit that could have cut it; else unless one is known not to."""
    if strict and call.limit is not None:
        return False
    for column, wanted in call.keys.items():
        if column not in values:
            if strict:
                return False
        elif values[column] != wanted:
            return False
    for column, conds in call.where.items():
        for op, arg in conds:
            met = _meets(values[column], op, arg) if column in values else None
            if met is False or (met is None and strict):
                return False
    return True


def _fired_notice(resource: Resource, laid: dict[str, set[int]], window: float) -> Notice:
    done = ", ".join(f"{what} by {', '.join(f'#{i}' for i in sorted(ids))}"
                     for what, ids in laid.items() if ids)
    return Notice(
        f'reads of "{resource.name}" include this session\'s fired writes that the tool\'s '
        f"rows do not show yet: rows {done}",
        hint=f"A tool may show a write late (an eventually consistent API). Each is laid "
        f"over its rows until they show it, for {window:g} s at most (read_your_writes_s);"
        " after that a read shows exactly what the tool returns.")


def _apply_staged(resource: Resource, rows: list[dict], staged: list[StagedWrite]
                  ) -> tuple[list[dict], Notice | None]:
    """The rows with the staged writes laid over them, in order, and the NOTICE that
    says what they changed (None: nothing)."""
    pk = resource.primary_key
    out = list(rows)
    index: dict[tuple[Any, ...], int] = {}
    if pk:
        index = {tuple(r.get(k) for k in pk): i for i, r in enumerate(out)}
    hidden: set[int] = set()
    counts = {"inserted": 0, "updated": 0, "deleted": 0}
    ids: list[int] = []
    unshown = 0
    for write in staged:
        used = False
        for call in write.calls:
            if call.verb == "insert":
                for row in resource.validate_rows([as_dict(r) for r in call.rows]):
                    key = tuple(row.get(k) for k in pk)
                    at = index.get(key) if pk and None not in key else None
                    if at is None or at in hidden:
                        index[key] = len(out)
                        out.append(row)
                    else:
                        out[at] = row
                    counts["inserted"] += 1
                    used = True
                continue
            bindings = call.bindings or {}
            if not pk or not all(k in bindings for k in pk):
                unshown += 1
                continue
            at = index.get(tuple(bindings[k] for k in pk))
            if at is None or at in hidden:
                continue
            if call.verb == "update":
                out[at] = {**out[at], **(call.changes or {})}
                counts["updated"] += 1
            else:
                hidden.add(at)
                counts["deleted"] += 1
            used = True
        if used:
            ids.append(write.id)
    if hidden:
        out = [r for i, r in enumerate(out) if i not in hidden]
    if not ids and not unshown:
        return out, None
    return out, _notice(resource, counts, ids, unshown)


def _notice(resource: Resource, counts: dict[str, int], ids: list[int], unshown: int
            ) -> Notice:
    done = ", ".join(f"{n} row{'s' if n != 1 else ''} {what}"
                     for what, n in counts.items() if n)
    by = ", ".join(f"#{i}" for i in ids)
    message = f'reads of "{resource.name}" include this transaction\'s staged writes'
    if done:
        message += f": {done} (by {by}), not fired yet"
    if unshown:
        message += (f"; {unshown} staged update/delete call{'s are' if unshown != 1 else ' is'}"
                    " not shown: the resource has no primary key to match rows by")
    return Notice(message, hint="COMMIT fires them and ROLLBACK discards them; values the "
                  "tool assigns (ids) read as NULL until COMMIT. SELECT * FROM "
                  "scratchpad.staged lists them.")
