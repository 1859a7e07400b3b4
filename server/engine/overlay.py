"""Read-your-writes: what a session's writes changed, laid over later reads.

Rules:
- Fired writes: rows are matched by the resource's primary key (a resource
  without one has no such overlay). A fired INSERT adds its rows (as the tool
  returned them, else as given); an UPDATE patches the row its key names; a
  DELETE hides it.
- Staged writes, inside a transaction: a read of a resource sees what the
  transaction has staged, in order. Staged INSERT rows appear (the values the
  tool assigns are NULL until COMMIT); with a primary key, a staged UPDATE shows
  its new values and a staged DELETE hides its row; without one, only inserts
  are shown. A read that the staged writes changed gets a NOTICE saying so, and
  EXPLAIN says the overlay applies. ROLLBACK (or ROLLBACK TO) drops them with
  the writes, since they are read from the transaction itself.
- Postgres applies the statement's predicates after the overlay, so a staged
  row that does not match them is not returned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from glove_scratchpad.resources import Resource

from .context import CURRENT_STATEMENT
from .result import Call, Notice, StagedWrite
from .transaction import Transaction, TxState

__all__ = ["Overlay", "as_dict"]

_DELETED = object()


def as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(by_alias=True) if hasattr(row, "model_dump") else dict(row)


class Overlay:
    """Per resource, per primary key: a new row, a patch, or a deletion (fired writes);
    and the staged writes of the session's transaction."""

    def __init__(self, tx: Transaction | None = None) -> None:
        self._by_resource: dict[str, dict[tuple[Any, ...], Any]] = {}
        self._tx = tx

    def remember(self, resource: Resource, call: Call, out: Any) -> None:
        pk = resource.primary_key
        if not pk:
            return
        overlay = self._by_resource.setdefault(resource.name, {})
        if call.verb == "insert":
            rows = out if isinstance(out, list | tuple) and out else [as_dict(r)
                                                                       for r in call.rows]
            for row in resource.validate_rows(list(rows)):
                if all(row.get(k) is not None for k in pk):
                    overlay[tuple(row[k] for k in pk)] = ("row", row)
            return
        bindings = call.bindings or {}
        if not all(k in bindings for k in pk):
            return
        key = tuple(bindings[k] for k in pk)
        if call.verb == "delete":
            overlay[key] = _DELETED
            return
        entry = overlay.get(key)
        changes = dict(call.changes or {})
        if isinstance(entry, tuple):
            kind, data = entry
            overlay[key] = (kind, {**data, **changes})
        else:
            overlay[key] = ("patch", changes)

    def apply(self, resource: Resource, rows: list[dict]) -> list[dict]:
        """The rows a read of ``resource`` sees: fired writes, then staged ones."""
        rows = self._apply_fired(resource, rows)
        staged = self._staged(resource.name)
        if not staged:
            return rows
        rows, notice = _apply_staged(resource, rows, staged)
        ctx = CURRENT_STATEMENT.get()
        if notice is not None and ctx is not None:
            ctx.notice(notice)
        return rows

    def touches(self, resource: str) -> bool:
        """Whether this session's fired or staged writes change reads of ``resource``."""
        return bool(self._by_resource.get(resource)) or bool(self._staged(resource))

    def explain_lines(self, resources: Iterable[str]) -> list[str]:
        """What EXPLAIN says of the staged writes that reads of these resources see."""
        lines = []
        for name in dict.fromkeys(resources):
            staged = self._staged(name)
            if staged:
                ids = ", ".join(f"#{w.id}" for w in staged)
                lines.append(f"Overlay: reads of {name} see this transaction's staged "
                             f"writes {ids} (not fired yet)")
        return lines

    def _staged(self, resource: str) -> list[StagedWrite]:
        tx = self._tx
        if tx is None or tx.state is TxState.IDLE or not tx.staged:
            return []
        return [w for w in tx.staged if w.resource == resource]

    def _apply_fired(self, resource: Resource, rows: list[dict]) -> list[dict]:
        overlay = self._by_resource.get(resource.name)
        if not overlay:
            return rows
        pk = resource.primary_key
        out, seen = [], set()
        for row in rows:
            key = tuple(row.get(k) for k in pk)
            entry = overlay.get(key)
            seen.add(key)
            if entry is _DELETED:
                continue
            if isinstance(entry, tuple) and entry[0] == "patch":
                row = {**row, **entry[1]}
            out.append(row)
        for key, entry in overlay.items():
            if isinstance(entry, tuple) and entry[0] == "row" and key not in seen:
                out.append(dict(entry[1]))
        return out


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
