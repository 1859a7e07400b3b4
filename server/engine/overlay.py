"""Read-your-writes: what a session's fired writes changed, laid over later reads.

Rules:
- Rows are matched by the resource's primary key; a resource without one has
  no overlay.
- A fired INSERT adds its rows (as the tool returned them, else as given); an
  UPDATE patches the row its key names; a DELETE hides it.
"""

from __future__ import annotations

from typing import Any

from glove_scratchpad.resources import Resource

from .result import Call

__all__ = ["Overlay", "as_dict"]

_DELETED = object()


def as_dict(row: Any) -> dict[str, Any]:
    return row.model_dump(by_alias=True) if hasattr(row, "model_dump") else dict(row)


class Overlay:
    """Per resource, per primary key: a new row, a patch, or a deletion."""

    def __init__(self) -> None:
        self._by_resource: dict[str, dict[tuple[Any, ...], Any]] = {}

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
