"""What the console asks the server, in SQL, on the signed-in role's own connection.

Rules:
- Every page is one or two statements over the ``scratchpad`` views, and every button
  one function call (``scratchpad.approve``, ``scratchpad.deny``,
  ``pg_cancel_backend``): the same statements a person would type in psql, so the
  server's rules, audit and errors apply unchanged.
- Values travel as parameters, never in the text. jsonb comes as text and is parsed
  here, so the templates get plain Python values.
- A server error reaches the page as ``Refused``: its SQLSTATE, message and hint,
  exactly as the server said them (never a traceback).
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from glove_scratchpad import errors
from glove_scratchpad.catalog import SYSTEM_VIEWS
from glove_scratchpad.names import quote_ident

__all__ = ["CALLS_SHOWN", "Reads", "Refused"]

CALLS_SHOWN = 200  # the most recent tool calls a page lists
APPROVALS_SHOWN = 200  # the most recent requests a page lists, the pending ones first

_APPROVAL_COLUMNS = ("id, asked_by, session, at, status, why::text AS why, decided_by, "
                     "decided_at, comment")


class Refused(Exception):
    """The server refused a statement: what it said."""

    def __init__(self, sqlstate: str, message: str, detail: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate, self.message, self.detail, self.hint = sqlstate, message, detail, hint

    @classmethod
    def of(cls, exc: asyncpg.PostgresError) -> Refused:
        return cls(str(getattr(exc, "sqlstate", None) or errors.InternalError.sqlstate),
                   str(getattr(exc, "message", None) or exc),
                   getattr(exc, "detail", None), getattr(exc, "hint", None))

    def __str__(self) -> str:
        parts = [f"{self.sqlstate}: {self.message}"]
        parts += [f"DETAIL: {self.detail}"] if self.detail else []
        parts += [f"HINT: {self.hint}"] if self.hint else []
        return "\n".join(parts)


async def _fetch(conn: Any, sql: str, *args: Any) -> list[dict[str, Any]]:
    try:
        return [dict(r) for r in await conn.fetch(sql, *args)]
    except asyncpg.PostgresError as exc:
        raise Refused.of(exc) from None


def _parsed(row: dict[str, Any], *columns: str) -> dict[str, Any]:
    for column in columns:
        if isinstance(row.get(column), str):
            row[column] = json.loads(row[column])
    return row


class Reads:
    """The console's statements, on the views of the server's system schema (``scratchpad``,
    or ``NAME_scratchpad`` for a server of another ``--name``)."""

    def __init__(self, schema: str) -> None:
        self.s = quote_ident(schema)

    async def approvals(self, conn: Any) -> list[dict[str, Any]]:
        """The requests the role may see, pending first, then the most recent."""
        rows = await _fetch(conn, f"SELECT {_APPROVAL_COLUMNS} FROM {self.s}.approvals "
                            "ORDER BY status = 'pending' DESC, at DESC LIMIT $1",
                            APPROVALS_SHOWN)
        return [_parsed(r, "why") for r in rows]

    async def approval(self, conn: Any, request: int) -> dict[str, Any] | None:
        """One request in full: its writes as COMMIT would send them."""
        found = await _fetch(conn, f"SELECT {_APPROVAL_COLUMNS}, writes::text AS writes "
                             f"FROM {self.s}.approvals WHERE id = $1", request)
        return _parsed(found[0], "why", "writes") if found else None

    async def decide(self, conn: Any, request: int, approve: bool, comment: str,
                     notices: list[str]) -> Any:
        """``approve(id, comment)`` or ``deny(id, reason)``: its value; the server's
        notices (who fired what) are added to ``notices``."""
        fn = f"{self.s}.approve" if approve else f"{self.s}.deny"
        return await _call(conn, f"SELECT {fn}($1, $2)", notices, request, comment)

    async def cancel(self, conn: Any, pid: int, notices: list[str]) -> bool:
        """``pg_cancel_backend(pid)``: whether a statement was cancelled."""
        return bool(await _call(conn, "SELECT pg_cancel_backend($1)", notices, pid))

    async def activity(self, conn: Any) -> list[dict[str, Any]]:
        """The sessions the role may see, with the statement each runs and its calls."""
        rows = await _fetch(conn, "SELECT pid, usename, state, query, query_start, "
                            f"backend_start, calls::text AS calls FROM {self.s}.activity "
                            "ORDER BY pid")
        return [_parsed(r, "calls") for r in rows]

    async def calls(self, conn: Any) -> list[dict[str, Any]]:
        """The most recent tool calls the role may see: outcome and latency. Reads of the
        server's own views (the console's among them, every few seconds) are left out."""
        rows = await _fetch(conn, "SELECT at, user_name, session, resource, verb, "
                            "arguments::text AS arguments, status, latency_ms, rows, error, "
                            f"statement FROM {self.s}.calls WHERE resource <> ALL($2::text[]) "
                            "ORDER BY at DESC LIMIT $1", CALLS_SHOWN, sorted(SYSTEM_VIEWS))
        return [_parsed(r, "arguments") for r in rows]

    async def resources(self, conn: Any) -> list[dict[str, Any]]:
        """Every table the role may call, as the ``resources`` view describes it."""
        return await _fetch(conn, "SELECT name, namespace, description, verbs, volatility, "
                            f"keys, primary_key, filters, columns FROM {self.s}.resources "
                            "ORDER BY namespace, name")


async def _call(conn: Any, sql: str, notices: list[str], *args: Any) -> Any:
    def heard(_conn: Any, message: Any) -> None:
        notices.append(str(getattr(message, "message", message)))

    conn.add_log_listener(heard)
    try:
        return await conn.fetchval(sql, *args)
    except asyncpg.PostgresError as exc:
        raise Refused.of(exc) from None
    finally:
        conn.remove_log_listener(heard)
