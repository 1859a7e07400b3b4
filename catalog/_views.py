"""The ``scratchpad`` schema's views, answering for the session whose statement runs.

Rules:
- The views are resources like any other (shell tables in ``scratchpad``), so
  ``\\d``, ``information_schema`` and joins work on them unchanged.
- Their rows come from the session running the statement, set in ``CURRENT``
  for the statement's life: the staged writes are that session's own, and the
  audit and the commit journal are its user's (an administrator's: everyone's).
- One row of ``scratchpad.resources`` is all an agent needs to call a table
  (``resource_row``): its columns with types and descriptions, keys and where
  they may come from, filters, verbs, volatility and example statements. So a
  catalog that lists only table names costs the agent one statement per table
  it uses, never several.
- A table's group (``resource_group``) is the same here and in the agent's
  preamble, so the preamble's counts and the view's ``namespace`` agree.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterable
from typing import Any, Protocol

from glove_scratchpad.resources import Bindings, Column, Fn, Resource, define_resource

from ._approvals import APPROVAL_COLUMNS
from ._audit import AUDIT_COLUMNS
from ._journal import JOURNAL_COLUMNS

__all__ = ["CURRENT", "SYSTEM_VIEWS", "ViewSource", "column_line", "example_statements",
           "own_description", "resource_filters", "resource_group", "resource_row",
           "short_description", "short_text"]


class ViewSource(Protocol):
    """What the views read: the running session."""

    def staged_rows(self) -> list[dict[str, Any]]: ...

    def resource_rows(self) -> list[dict[str, Any]]: ...

    async def call_rows(self) -> list[dict[str, Any]]: ...

    async def journal_rows(self, txids: list[int]) -> list[dict[str, Any]]: ...

    def cache_rows(self) -> list[dict[str, Any]]: ...

    def activity_rows(self) -> list[dict[str, Any]]: ...

    async def approval_rows(self) -> list[dict[str, Any]]: ...


CURRENT: contextvars.ContextVar[ViewSource] = contextvars.ContextVar("glove_view_source")

_STAGED_COLUMNS = [
    {"name": "id", "pg_type": "bigint", "description": "The write's number (#n)"},
    {"name": "resource", "pg_type": "text", "description": "The table written"},
    {"name": "verb", "pg_type": "text", "description": "insert, update or delete"},
    {"name": "statement", "pg_type": "text", "description": "The statement that staged it"},
    {"name": "calls", "pg_type": "text", "description": "The calls, in short"},
    {"name": "status", "pg_type": "text", "description": "staged; or folded into #n: it "
     "changes rows an INSERT of the transaction stages, sent with that INSERT"},
    {"name": "rows", "pg_type": "jsonb", "description": "An insert: the rows COMMIT sends, "
     "as the tool will get them"},
    {"name": "changes", "pg_type": "jsonb", "description": "An update: the new values each "
     "call sends, one element per call"},
    {"name": "bindings", "pg_type": "jsonb", "description": "An update or delete: what "
     "each call is given (keys, primary key, filters' conditions), one element per call"},
    {"name": "depends_on", "pg_type": "bigint[]", "description": "The writes (#n) whose "
     "returned rows it reads, in a WITH that holds writes: COMMIT plans it again from "
     "them, once they have fired; rows, changes and bindings show it as planned now"},
    {"name": "approval", "pg_type": "text", "description": "Whether COMMIT needs a "
     "person's approval to send it, and why: the rule, or the untrusted read (resource and "
     "time); NULL: it does not"},
]
# The first six are the view's original columns, in their original order.
_RESOURCE_COLUMNS = [
    ("name", "The table (a tool)"),
    ("description", "What it does"),
    ("verbs", "What it allows: select, insert, update, delete"),
    ("volatility", "How long an answer is reused: volatile (never), stable (within one "
     "request), immutable (for the server's life)"),
    ("keys", "Required keys: the tool's required arguments, bound in WHERE"),
    ("primary_key", "The columns that identify a row (UPDATE, DELETE)"),
    ("namespace", "The group it is listed under: a declared group, an MCP server's "
     "namespace, or the name up to its first underscore"),
    ("filters", "Optional columns whose conditions (=, <>, <, <=, >, >=, IN, LIKE, ILIKE, "
     "IS NULL) reach the tool"),
    ("columns", "One line per column: name, type, role, description"),
    ("key_sources", "Where each required key's value may come from"),
    ("example", "Example statements, one per verb"),
]

# The end of a first sentence: a full stop (not that of "e.g." or "i.e.") before a space.
_SENTENCE_END = re.compile(r"(?<!\.[A-Za-z])[.!?](?=\s|$)")
SHORT_DESCRIPTION = 90  # characters of a one-line description, so a line fits a screen
FEEDERS_SHOWN = 5  # same-named columns of other tables shown as a key's possible feeders


def resource_group(resource: Resource) -> str:
    """The group a table is listed under when there are many.

    A declared ``group`` (or ``namespace``) attribute, such as the MCP server a
    table was made from (``Resource.group``); else the name up to its first
    underscore (``github_pr`` -> ``github``), or the whole name when it has none.
    """
    for attr in ("group", "namespace"):
        declared = getattr(resource, attr, None)
        if isinstance(declared, str) and declared:
            return declared
    head, _, rest = resource.name.partition("_")
    return head if head and rest else resource.name


def resource_filters(resource: Resource) -> tuple[str, ...]:
    """The declared filters (``define_resource(..., filters=[...])``), if it has any."""
    return tuple(getattr(resource, "filters", None) or ())


def own_description(described: Resource | Fn) -> str:
    """A table's or a function's description without what its maker appended to it (an
    MCP tool's origin, how an INSERT calls it): its ``brief``, when it has one."""
    return described.description if described.brief is None else described.brief


def short_description(resource: Resource, limit: int = SHORT_DESCRIPTION) -> str:
    """The first sentence of its own description (``own_description``), cut at a word
    near ``limit``."""
    return short_text(own_description(resource), limit)


def short_text(description: str, limit: int = SHORT_DESCRIPTION) -> str:
    """A description's first sentence, cut at a word near ``limit``."""
    text = " ".join(description.split())
    end = _SENTENCE_END.search(text)
    if end is not None:
        text = text[:end.start() + 1]
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def column_line(resource: Resource, column: Column, *, filters: bool = True) -> str:
    """``name type, role: description``: how the preamble and the view show a column.

    ``filters=False`` leaves the filter role out (the full preamble lists the
    filters once, beside the keys)."""
    marks = [column.pg_type]
    if column.name in resource.keys:
        marks.append("required key")
    elif filters and column.name in resource_filters(resource):
        marks.append("filter")
    elif "insert" in resource.verbs and not column.nullable:
        marks.append("not null")
    about = f": {column.description}" if column.description else ""
    return f"{column.name} {', '.join(marks)}{about}"


def _placeholder(column: Column | None) -> str:
    """A value of the column's type, for an example: the agent puts its own in its place."""
    pg_type = column.pg_type if column is not None else "text"
    if pg_type.endswith("[]"):
        return "ARRAY['…']"
    if pg_type in ("bigint", "integer", "smallint", "numeric", "double precision", "real"):
        return "1"
    if pg_type == "boolean":
        return "true"
    if pg_type == "date":
        return "current_date"
    if pg_type.startswith("timestamp"):
        return "now()"
    if pg_type in ("jsonb", "json"):
        return f"'…'::{pg_type}"
    return "'…'"


def _equalities(resource: Resource, names: Iterable[str]) -> str:
    return " AND ".join(f"{n} = {_placeholder(resource.column(n))}" for n in names)


def example_statements(resource: Resource) -> list[str]:
    """One example statement per verb, with the required keys bound."""
    name, out = resource.name, []
    if "select" in resource.verbs:
        where = _equalities(resource, resource.keys)
        out.append(f"SELECT * FROM {name}" + (f" WHERE {where}" if where else ""))
    if "insert" in resource.verbs:
        given = list(resource.keys) or [c.name for c in resource.columns if not c.nullable]
        given = given or [resource.columns[0].name]
        values = ", ".join(_placeholder(resource.column(c)) for c in given)
        out.append(f"INSERT INTO {name} ({', '.join(given)}) VALUES ({values}) RETURNING *")
    row = resource.primary_key or resource.keys
    where = f" WHERE {_equalities(resource, row)}" if row else ""
    if "update" in resource.verbs:
        target = next((c for c in resource.columns if c.name not in row), resource.columns[0])
        out.append(f"UPDATE {name} SET {target.name} = {_placeholder(target)}{where}")
    if "delete" in resource.verbs:
        out.append(f"DELETE FROM {name}{where}")
    return out


def _key_sources(resource: Resource, others: Iterable[Resource]) -> str:
    lines = []
    for key in resource.keys:
        line = (f"{key}: a value ({key} = …, or {key} IN (…) for one call per value: "
                "constants, $n parameters, an uncorrelated subquery), or another table's "
                f"column (JOIN {resource.name} x ON x.{key} = t.col, LATERAL, a correlated "
                "subquery)")
        feeders = [f"{o.name}.{key}" for o in others if o.name != resource.name
                   and key not in o.keys and o.column(key) is not None]
        if feeders:
            more = ", …" if len(feeders) > FEEDERS_SHOWN else ""
            line += f"; same-named columns: {', '.join(feeders[:FEEDERS_SHOWN])}{more}"
        lines.append(line)
    return "\n".join(lines)


def resource_row(resource: Resource, others: Iterable[Resource] = ()) -> dict[str, Any]:
    """One row of ``scratchpad.resources``: everything needed to call the table.

    ``others`` are the tables the same session sees, searched for same-named
    columns that could feed a required key.
    """
    return {
        "name": resource.name,
        "description": resource.description,
        "verbs": ", ".join(resource.verbs),
        "volatility": resource.volatility,
        "keys": ", ".join(resource.keys),
        "primary_key": ", ".join(resource.primary_key),
        "namespace": resource_group(resource),
        "filters": ", ".join(resource_filters(resource)),
        "columns": "\n".join(column_line(resource, c) for c in resource.columns),
        "key_sources": _key_sources(resource, others),
        "example": "\n".join(example_statements(resource)),
    }


def _staged(b: Bindings) -> list[dict[str, Any]]:
    return CURRENT.get().staged_rows()


def _resources(b: Bindings) -> list[dict[str, Any]]:
    rows = CURRENT.get().resource_rows()
    # WHERE name = '…' reads the rows of the tables named (Postgres applies every
    # condition again); a name no table has is told so, with a search (engine/suggest).
    named = {v for op, v in b.where("name") if op == "="}
    return [r for r in rows if r["name"] in named] if named else rows


async def _calls(b: Bindings) -> list[dict[str, Any]]:
    return await CURRENT.get().call_rows()


_CACHE_COLUMNS = [
    ("resource", "text", "The table whose call is kept"),
    ("arguments", "jsonb", "The call's arguments: keys, filter conditions, limit (another "
     "user's: NULL)"),
    ("rows", "bigint", "Rows of the call"),
    ("bytes", "bigint", "Size of its table in the sidecar"),
    ("made_at", "timestamp with time zone", "When the call was made and kept"),
    ("expires_at", "timestamp with time zone", "When it goes (its ttl); NULL: until a write "
     "through the resource, SELECT scratchpad.refresh('resource'), or eviction"),
    ("hits", "bigint", "Statements that read it since, with no call"),
    ("table_name", "text", "The sidecar table statements read in its place"),
    ("indexes", "text", "Its indexes, by their columns: the primary key (or keys), then "
     "the columns statements look it up by, built in the background"),
    ("credential", "text", "Whose credentials made the call (a role's name): such a call is "
     "read by that role alone, and shown to it and to an administrator. NULL: made the "
     "same for every user, and shared"),
]


def _cache(b: Bindings) -> list[dict[str, Any]]:
    return CURRENT.get().cache_rows()


def _activity(b: Bindings) -> list[dict[str, Any]]:
    return CURRENT.get().activity_rows()


_ACTIVITY_COLUMNS = [
    ("pid", "integer", "The session's process id, as pg_backend_pid() answers it there: "
     "SELECT pg_cancel_backend(pid) cancels its statement"),
    ("usename", "text", "Its user"),
    ("state", "text", "active (a statement runs), idle, idle in transaction, or idle in "
     "transaction (aborted)"),
    ("query", "text", "The statement running, else the last one"),
    ("query_start", "timestamp with time zone", "When that statement started"),
    ("backend_start", "timestamp with time zone", "When the session started"),
    ("calls", "jsonb", "The tool calls in flight, while a statement runs: resource, verb "
     "and the seconds each has taken so far"),
]


async def _journal(b: Bindings) -> list[dict[str, Any]]:
    # WHERE txid = … reads one transaction's rows, not the user's whole history.
    return await CURRENT.get().journal_rows(b.all("txid"))


async def _approvals(b: Bindings) -> list[dict[str, Any]]:
    return await CURRENT.get().approval_rows()


SYSTEM_VIEWS: dict[str, Resource] = {r.name: r for r in (
    define_resource("staged", columns=_STAGED_COLUMNS, volatility="volatile",
                    description="The writes this session has staged in its open transaction.",
                    select=_staged, inline=True),
    define_resource("resources", volatility="volatile",
                    columns=[{"name": n, "pg_type": "text", "description": d}
                             for n, d in _RESOURCE_COLUMNS],
                    description="Every table with what it takes to call it: columns, keys, "
                    "filters, verbs, volatility, examples. One table: WHERE name = '…'; one "
                    "group: WHERE namespace = '…'.",
                    filters=["name"], select=_resources),
    define_resource("calls", columns=AUDIT_COLUMNS, volatility="volatile",
                    description="The audit of tool calls: your own (an administrator's: "
                    "everyone's).", select=_calls),
    define_resource("journal", columns=JOURNAL_COLUMNS, volatility="volatile",
                    filters=["txid"],
                    description="The commit journal: one row per write a COMMIT made, with its "
                    "status (staged, firing, fired, failed, not run, in doubt), what the tool "
                    "returned and its idempotency key; your own (an administrator's: "
                    "everyone's). SELECT scratchpad.restage(txid) stages a transaction's "
                    "unfired writes again.", select=_journal),
    define_resource("activity", volatility="volatile",
                    columns=[{"name": n, "pg_type": t, "description": d}
                             for n, t, d in _ACTIVITY_COLUMNS],
                    description="The sessions of this server process, as pg_stat_activity: "
                    "your own (an administrator's: everyone's), with the statement each "
                    "runs and its tool calls in flight. SELECT pg_cancel_backend(pid) "
                    "cancels one.", select=_activity, inline=True),
    define_resource("cache", volatility="volatile",
                    columns=[{"name": n, "pg_type": t, "description": d}
                             for n, t, d in _CACHE_COLUMNS],
                    description="The kept calls: results of immutable (and stable, with a "
                    "ttl) tables materialized in the sidecar, read in place of a new call. "
                    "SELECT scratchpad.refresh('table') drops a table's.",
                    select=_cache, inline=True),
    define_resource("approvals", volatility="volatile",
                    columns=[{"name": n, "pg_type": t, "description": d}
                             for n, t, d in APPROVAL_COLUMNS],
                    description="Approval requests: a COMMIT whose writes need a person, "
                    "with why and the writes in full; your own (an approver's: everyone's). "
                    "An approver decides: SELECT scratchpad.approve(id, 'comment'), SELECT "
                    "scratchpad.deny(id, 'reason').", select=_approvals),
)}
