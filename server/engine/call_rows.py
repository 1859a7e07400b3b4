"""A reference's rows from its calls' results, and the NOTICEs that say why a read
has none.

Rules:
- Of several calls (one per key value), each keeps the rows of its own key values:
  a tool that ignored its key would otherwise give every row once per call.
- A call whose rows all carry another value of its key (a field of that name that
  means something else) gets a NOTICE naming the key: Postgres keeps none of them.
- A reference with no rows gets a NOTICE saying why: no call could match its WHERE,
  the calls' values found none, or the tool, called with no filter, had none.
- The rows are laid under the session's overlay (its staged writes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glove_scratchpad.resources import Resource

from ..sql.analysis import Reference
from .context import CallArgs
from .result import Notice

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["rows_of"]


def rows_of(st: Statement, ref: Reference, calls: list[CallArgs],
            results: list[list[dict[str, Any]]], ctx: Statement
            ) -> list[dict[str, Any]]:
    """A reference's rows: every call's rows, duplicates included, under the session's
    overlay, with a NOTICE when there are none.

    Of several calls (one per key value), each keeps the rows of its own key values: a
    tool that ignored its key would otherwise give every row once per call."""
    resource: Resource = ref.resource
    if len(results) == 1:
        rows = list(results[0])
    else:
        rows = [row for call, part in zip(calls, results, strict=True)
                for row in _of_call(call, part)]
    emptied = _emptied(calls, results)
    if emptied is not None:
        ctx.notice(_emptied_notice(resource, *emptied))
    rows, notices = st.overlay.apply(resource, rows, calls)
    for notice in notices:
        ctx.notice(notice)
    # An empty scratchpad view (nothing staged) is an answer, not a filter to re-check.
    if not rows and ref.schema != st.services.schemas.system:
        # The values the calls were made with, not the $n or expression that gave them.
        args = " OR ".join(" AND ".join(f"{k} = {_sql_literal(v)}" for k, v in c.keys.items())
                           for c in calls if c.keys)
        filters = ", ".join(f"{c} {op} {_sql_literal(v)}" for c, conds in
                            (calls[0].where.items() if calls else ()) for op, v in conds)
        if filters:
            args = f"{args} (filters: {filters})" if args else filters
        ctx.notices.append(_no_rows_notice(ref, calls, args))
    return rows


def _no_rows_notice(ref: Reference, calls: list[CallArgs], args: str) -> Notice:
    """Why a reference has no rows, as a sentence: no call could match its WHERE (a
    NULL, an empty IN, a value its column cannot hold), the calls' values found none,
    or the tool, called with no filter, had none."""
    name = ref.resource.name
    if not calls:
        shown = " AND ".join(
            f"{p.column} = {', '.join(v.sql for v in p.values)}" for p in ref.predicates
            if p.values and all(v.sql for v in p.values))
        return Notice(
            f'resource "{name}" was not called: no row can match '
            + (shown if shown else "its WHERE")
            + " (a NULL, an empty IN list, or a value its column's type cannot hold)",
            hint=f"Give each key one value of its column's type (\\d+ {name} shows "
            "the types).")
    if not args:
        return Notice(f'resource "{name}" returned no rows',
                      hint=f"The tool was called with no filter and had no rows to give; "
                      f"\\d+ {name} describes what it lists.")
    return Notice(f'resource "{name}" returned no rows for {args}',
                  hint=f"Re-check the filter values against the column descriptions "
                  f"(\\d+ {name}).")


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _emptied(calls: list[CallArgs], results: list[list[dict[str, Any]]]
             ) -> tuple[int, CallArgs, str] | None:
    """A call that returned rows none of which holds its key's value (the rows carry a
    field of that name with another meaning): how many, the call, the key."""
    for call, rows in zip(calls, results, strict=True):
        for key, value in call.keys.items():
            if rows and all(row.get(key) != value for row in rows):
                return len(rows), call, key
    return None


def _emptied_notice(resource: Resource, count: int, call: CallArgs, key: str) -> Notice:
    value = _sql_literal(call.keys[key])
    return Notice(
        f'resource "{resource.name}" returned {count} row{"s" if count != 1 else ""} for '
        f"{key} = {value}, none with that {key}: Postgres keeps only the rows whose {key} is "
        "the value given, so the answer has none of them",
        hint=f"The rows carry a {key} of their own, which means something else than the "
        f"argument. Give the argument a column of its own (an HTTP API's table: params = "
        f"{{ {key} = \"…\" }} in its [[openapi.apis.tables]] entry); \\d+ {resource.name} "
        "says which column is which.")


def _of_call(call: CallArgs, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose key columns hold the call's values (a missing one was stamped)."""
    keys = call.keys
    if all(row.get(k) == v for row in rows for k, v in keys.items()):
        return rows
    return [row for row in rows if all(row.get(k) == v for k, v in keys.items())]
