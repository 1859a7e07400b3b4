"""Which operations of a document a config selects (``include``, ``exclude``,
``reads``: tags, operationIds, ``METHOD /path``, path globs), and which operations no
table sends, each with its reason, for the start log."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

from ._config import ApiConfig
from ._spec import Operation, Spec

__all__ = ["not_served", "selected"]


def selected(op: Operation, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        method, _, path = pattern.partition(" ")
        if pattern in op.tags or pattern == op.operation_id or (
                path and f"{method.upper()} {path}" == op.label):
            return True
        if pattern.startswith("/") and fnmatch.fnmatchcase(op.path, pattern):
            return True
    return False


def not_served(spec: Spec, config: ApiConfig, sent: set[str]) -> list[tuple[str, str]]:
    """The operations whose labels are not in ``sent`` (the ones the tables send), each
    with the reason the config gives (a table that was planned but not made is the
    caller's to explain)."""
    out = [(f"{method.upper()} {path}", f"{method.upper()} is not mapped (a SELECT sends "
            "GET; writes are POST, PUT, PATCH and DELETE)")
           for path, item in (spec.document.get("paths") or {}).items()
           if isinstance(item, Mapping) for method in ("head", "options", "trace")
           if method in item]
    for op in spec.operations():
        if op.label in sent:
            continue
        excluded = next((p for p in config.exclude if selected(op, [p])), None)
        if not config.auto:
            why = "auto = false, and no [[openapi.apis.tables]] entry names it"
        elif config.include and not selected(op, config.include):
            why = "include does not name it"
        elif excluded is not None:
            why = f"exclude names it ({excluded!r})"
        else:
            why = "it makes no table"
        out.append((op.label, why))
    return out
