"""The agent's single tool: ``execute_sql`` (and ``explain_sql``), its preamble, its output.

- **Tool definitions.** ``tool_definitions()`` gives both tools as plain dicts
  (``name``, ``description``, ``input_schema``: a JSON Schema with ``sql`` and
  an optional ``params`` array). ``openai_tools()`` and ``anthropic_tools()``
  adapt them to those APIs' tool formats; no SDK is imported.
- **The preamble.** ``preamble(db_or_resources)`` is markdown generated from the
  catalog: the discipline (discover, invoke, compose, stage, preview, commit)
  and the tables, in one of two forms. The full form gives every table with
  its columns, keys, verbs and volatility; the compact one gives each table in
  one line (name, verbs, required keys, a short description) and the one
  statement that reads everything needed to call a table
  (``scratchpad.resources``, see ``catalog/_views.py``). With more than
  ``LIST_LIMIT`` tables the compact form lists groups (namespaces) with their
  counts, and the one statement that lists a group's tables. ``detail="auto"``
  (the default) keeps the full form while it is at most ``FULL_LIMIT``
  characters. It describes schema, never rows, so it is deterministic.
  ``python -m glove_scratchpad.server.agent > docs/preamble.md`` regenerates
  the demo set's (``--compact`` prints its compact form).
- **Handlers.** ``execute_sql(session, sql, params)`` and ``explain_sql(...)``
  return text for a model: the command tag, the rows as TSV (capped, with a
  note when cut), the notices and the staged writes; a SQL error becomes its
  SQLSTATE, message, DETAIL and HINT instead of an exception. ``call_tool``
  dispatches a model's tool call by name. Only our own bugs raise.

Row values are shown as Postgres wrote them in its text format (``t``/``f``,
ISO dates, JSON), NULL as ``NULL``; tabs and newlines inside a value are shown
as ``\\t`` and ``\\n``. A value is cut at ``MAX_CELL`` characters, except in a
read of ``scratchpad.resources`` alone (``MAX_CATALOG_CELL``): a compact
catalog promises that one such read is enough to call a table.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glove_scratchpad.catalog import SYSTEM_VIEWS
from glove_scratchpad.errors import SqlError

from .engine.database import Database
from .engine.result import Notice, Result, StagedWrite
from .engine.session import Session
from .preamble import (
    DISCOVERY_SQL,
    FULL_LIMIT,
    GROUP_SQL,
    LIST_LIMIT,
    SEARCH_SQL,
    Detail,
    catalog_form,
    preamble,
)

__all__ = [
    "DISCOVERY_SQL",
    "EXECUTE_SQL",
    "EXPLAIN_SQL",
    "FULL_LIMIT",
    "GROUP_SQL",
    "LIST_LIMIT",
    "MAX_CATALOG_CELL",
    "MAX_CELL",
    "MAX_ROWS",
    "SEARCH_SQL",
    "Detail",
    "ToolReply",
    "anthropic_tool",
    "anthropic_tools",
    "call_tool",
    "catalog_form",
    "execute_sql",
    "explain_sql",
    "openai_tool",
    "openai_tools",
    "preamble",
    "render_error",
    "render_result",
    "tool_definitions",
]

MAX_ROWS = 50  # rows shown per result; the command tag still counts them all
MAX_CELL = 500  # characters shown per value
# ... except in a read of scratchpad.resources alone: a table's columns and examples are
# what the agent asked for, and cut they would cost it more statements, not fewer.
MAX_CATALOG_CELL = 10_000

# -- tool definitions ----------------------------------------------------------

_PARAMS_SCHEMA = {
    "type": "array",
    "description": "Values for $1, $2, … in the statement, in order.",
    "items": {"type": ["string", "number", "boolean", "null"]},
}

EXECUTE_SQL: dict[str, Any] = {
    "name": "execute_sql",
    "description": (
        "Run one SQL statement (PostgreSQL dialect) against the database whose tables are your "
        "tools. WHERE equalities are a table's arguments; JOINs and subqueries compose tools; "
        "inside BEGIN, writes are staged until COMMIT. Returns the command tag, rows, notices "
        "and staged writes, or the error with its HINT."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "sql": {"type": "string", "description": "One SQL statement."},
            "params": _PARAMS_SCHEMA,
        },
        "required": ["sql"],
        "additionalProperties": False,
    },
}

EXPLAIN_SQL: dict[str, Any] = {
    "name": "explain_sql",
    "description": (
        "Dry-run one SQL statement: shows which tables (tools) it would call, with which "
        "arguments, and the query plan. Calls nothing and costs nothing."
    ),
    "input_schema": copy.deepcopy(EXECUTE_SQL["input_schema"]),
}


def tool_definitions() -> list[dict[str, Any]]:
    """Both tools as ``{"name", "description", "input_schema"}`` dicts (fresh copies)."""
    return [copy.deepcopy(EXECUTE_SQL), copy.deepcopy(EXPLAIN_SQL)]


def openai_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition in the OpenAI format: ``{"type": "function", "function": {…}}``."""
    return {"type": "function", "function": {
        "name": tool["name"], "description": tool["description"],
        "parameters": copy.deepcopy(tool["input_schema"]),
    }}


def anthropic_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition in the Anthropic format: ``{"name", "description", "input_schema"}``."""
    return {"name": tool["name"], "description": tool["description"],
            "input_schema": copy.deepcopy(tool["input_schema"])}


def openai_tools() -> list[dict[str, Any]]:
    return [openai_tool(t) for t in tool_definitions()]


def anthropic_tools() -> list[dict[str, Any]]:
    return [anthropic_tool(t) for t in tool_definitions()]


# -- rendering -----------------------------------------------------------------


def render_result(result: Result, *, max_rows: int = MAX_ROWS, max_cell: int = MAX_CELL) -> str:
    """A result as compact text: per statement, its tag, rows (TSV), notices and writes."""
    parts = result.statements or [result]
    return "\n".join(_render_one(p, max_rows, max_cell) for p in parts)


def _render_one(result: Result, max_rows: int, max_cell: int) -> str:
    lines = [result.command_tag or "(empty query)"]
    if result.columns:
        lines.append("\t".join(_clean(c.name) for c in result.columns))
        rows = _text_rows(result)
        cut = False
        for row in rows[:max_rows]:
            cells = []
            for value in row:
                if value is not None and len(value) > max_cell:
                    value, cut = value[:max_cell] + f"…(+{len(value) - max_cell} chars)", True
                cells.append("NULL" if value is None else _clean(value))
            lines.append("\t".join(cells))
        if not rows:
            lines.append("(no rows)")
        elif len(rows) > max_rows:
            lines.append(f"[showing {max_rows} of {len(rows)} rows: narrow the WHERE, add "
                         "LIMIT/OFFSET, or aggregate]")
        if cut:
            lines.append(f"[values longer than {max_cell} characters were cut: select a part "
                         "with substr(), or use the value inside SQL]")
    lines += [_notice(n) for n in result.notices]
    mentioned = " ".join(n.message for n in result.notices)
    lines += [_write(w) for w in (*result.staged, *result.committed)
              if f"#{w.id}:" not in mentioned]
    return "\n".join(lines)


def _text_rows(result: Result) -> list[tuple[str | None, ...]]:
    """Rows as Postgres' text, from the encoded DataRows when present, else from values."""
    if result.data_rows and all(f.format == 0 for f in result.fields):
        return [tuple(None if v is None else bytes(v).decode("utf-8", "replace")
                      for v in row.values) for row in result.data_rows]
    return [tuple(_python_text(v) for v in row) for row in result.rows]


def _python_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _clean(text: str) -> str:
    return text.replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


def _notice(n: Notice) -> str:
    out = f"{n.severity}: {n.message}"
    if n.detail:
        out += f"\nDETAIL: {n.detail}"
    if n.hint:
        out += f"\nHINT: {n.hint}"
    return out


def _write(w: StagedWrite) -> str:
    out = f"{w.status} #{w.id}: {w.summary}"
    if w.status == "staged":
        out += " (fires at COMMIT; ROLLBACK discards it)"
    if w.error:
        out += f": {w.error}"
    return out


def render_error(error: SqlError, sql: str | None = None) -> str:
    """An error as psql shows it, with its SQLSTATE: message, the position, DETAIL, HINT."""
    lines = [f"{error.severity} {error.sqlstate}: {error.message}"]
    if sql and error.position:
        lines += _position(sql, error.position)
    if error.detail:
        lines.append(f"DETAIL: {error.detail}")
    if error.hint:
        lines.append(f"HINT: {error.hint}")
    return "\n".join(lines)


def _position(sql: str, position: int) -> list[str]:
    index = min(max(position - 1, 0), len(sql))
    start = sql.rfind("\n", 0, index) + 1
    end = sql.find("\n", index)
    line_no = sql.count("\n", 0, index) + 1
    prefix = f"LINE {line_no}: "
    text = sql[start:end if end != -1 else len(sql)]
    return [prefix + text, " " * (len(prefix) + index - start) + "^"]


# -- handlers ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolReply:
    """What a tool call gives the model: text, and whether it reports an error."""

    text: str
    is_error: bool = False


_CATALOG_VIEW = SYSTEM_VIEWS["resources"].name


def _session(target: Session | Database) -> Session:
    return target.default_session if isinstance(target, Database) else target


def _aborted_note(session: Session) -> str:
    if session.tx_status == "E":
        return ("\nNOTE: the open transaction is aborted; send ROLLBACK (its staged writes are "
                "discarded), then start again")
    return ""


async def _run(target: Session | Database, sql: str, params: Sequence[Any] | None, *,
               explain: bool, max_rows: int, max_cell: int) -> ToolReply:
    session = _session(target)
    try:
        if explain:
            result = await session.explain(sql, params)
        else:
            result = await session.execute(sql, params, decode=False)
    except SqlError as exc:
        return ToolReply(render_error(exc, sql) + _aborted_note(session), is_error=True)
    if _reads_the_catalog_alone(session, result):
        max_cell = max(max_cell, MAX_CATALOG_CELL)
    return ToolReply(render_result(result, max_rows=max_rows, max_cell=max_cell))


def _reads_the_catalog_alone(session: Session, result: Result) -> bool:
    """Whether the statement read ``scratchpad.resources`` and nothing else."""
    if _CATALOG_VIEW in session.services.resources:  # a served table of that name: ambiguous
        return False
    touched = [t for part in (result.statements or [result]) for t in part.touched]
    return bool(touched) and all(t.resource == _CATALOG_VIEW for t in touched)


async def execute_sql(session: Session | Database, sql: str,
                      params: Sequence[Any] | None = None, *, max_rows: int = MAX_ROWS,
                      max_cell: int = MAX_CELL) -> str:
    """Run one statement and render its result (or its error) for a model."""
    reply = await _run(session, sql, params, explain=False, max_rows=max_rows,
                       max_cell=max_cell)
    return reply.text


async def explain_sql(session: Session | Database, sql: str,
                      params: Sequence[Any] | None = None, *, max_rows: int = 200,
                      max_cell: int = MAX_CELL) -> str:
    """EXPLAIN one statement (calling nothing) and render the plan (or the error)."""
    reply = await _run(session, sql, params, explain=True, max_rows=max_rows, max_cell=max_cell)
    return reply.text


async def call_tool(session: Session | Database, name: str,
                    arguments: Mapping[str, Any] | str | None) -> ToolReply:
    """Run a model's tool call: ``name`` and its arguments (a dict, or OpenAI's JSON text).

    Bad arguments are the model's mistake, so they come back as an error reply.
    """
    if name not in (EXECUTE_SQL["name"], EXPLAIN_SQL["name"]):
        return ToolReply(f"ERROR: unknown tool {name!r}; the tools are execute_sql and "
                         "explain_sql", is_error=True)
    try:
        sql, params = _arguments(arguments)
    except ValueError as exc:
        return ToolReply(f"ERROR: {name}: {exc}", is_error=True)
    return await _run(session, sql, params, explain=name == EXPLAIN_SQL["name"],
                      max_rows=MAX_ROWS, max_cell=MAX_CELL)


def _arguments(arguments: Mapping[str, Any] | str | None) -> tuple[str, list[Any] | None]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not JSON ({exc.msg})") from None
    if not isinstance(arguments, Mapping):
        raise ValueError('the arguments must be an object: {"sql": "…", "params": […]}')
    sql, params = arguments.get("sql"), arguments.get("params")
    if not isinstance(sql, str) or not sql.strip():
        raise ValueError('"sql" must be one SQL statement, as a string')
    if isinstance(params, str):  # some models send the array as JSON text
        with contextlib.suppress(json.JSONDecodeError):
            params = json.loads(params)
    if params is not None and not isinstance(params, list):
        raise ValueError('"params" must be an array of values for $1, $2, …')
    return sql, params


def _main() -> None:
    import sys

    from glove_scratchpad.resources.demo import demo_resources

    detail: Detail = "compact" if "--compact" in sys.argv[1:] else "auto"
    print(preamble(demo_resources(), writes=True, detail=detail), end="")


if __name__ == "__main__":
    _main()
