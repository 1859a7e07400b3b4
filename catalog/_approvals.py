"""Approval requests: a COMMIT's writes waiting for a person, kept in the sidecar.

Rules:
- One row per request, in the private schema beside the journal, so it survives a
  restart and every worker of the server sees it: who asked (role, session), when,
  why the writes need approval, and the writes in full (what COMMIT would send).
- Its status moves one way, each step one atomic UPDATE that names the status it
  leaves, so two deciders, or a decider and the COMMIT that waits, never both win:
  ``pending`` -> ``approved`` or ``denied``; ``approved`` -> ``firing`` (claimed by
  the one that fires it) -> ``fired`` or ``failed``.
- ``waiting`` says a COMMIT waits for the decision and will fire it itself; the
  COMMIT clears it when it stops waiting (its timeout, a cancel, its client gone),
  in the same statement that reads whether a decision came first. A decider that
  finds it clear fires the writes. At start-up, no COMMIT waits any more.
- ``history`` is the request's audit: each event (asked, approved, denied, timed
  out, fired, failed) with when, who, and what.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from glove_scratchpad.names import quote_ident

from ._access import Access
from ._journal import as_json

__all__ = ["APPROVAL_COLUMNS", "ApprovalStore"]

APPROVAL_COLUMNS = [
    ("id", "bigint", "The request's number: SELECT scratchpad.approve(id, 'comment')"),
    ("asked_by", "text", "The role whose COMMIT asked"),
    ("session", "bigint", "The session that asked"),
    ("at", "timestamp with time zone", "When it was asked"),
    ("status", "text", "pending, approved, denied, firing, fired or failed"),
    ("why", "jsonb", "Why each write needs approval: the rule, or the untrusted read "
     "(resource and time)"),
    ("writes", "jsonb", "The writes in full, in the order they fire: resolver and "
     "arguments (rows, changes, keys), and for an HTTP API the method, URL and body"),
    ("decided_by", "text", "The approver who decided"),
    ("decided_at", "timestamp with time zone", "When"),
    ("comment", "text", "The approver's comment, or the reason of a denial"),
    ("waiting", "boolean", "A COMMIT waits for the decision now"),
    ("txid", "bigint", "The journal's transaction of the writes, once they fired"),
    ("fired_at", "timestamp with time zone", "When they fired"),
    ("outcome", "text", "What firing them did: fired, or the error that stopped them"),
    ("history", "jsonb", "Every event: asked, approved, denied, timed out, fired, failed; "
     "when, by whom"),
]
_FIELDS = ", ".join(n for n, _, _ in APPROVAL_COLUMNS)
_JSON = ("why", "writes", "history")


def _event(event: str, by: str | None = None, **more: Any) -> str:
    return as_json([{"event": event, "by": by, **more}])


class ApprovalStore:
    """The requests' table, through the server's own connections."""

    def __init__(self, pool: asyncpg.Pool | None, schema: str) -> None:
        self._pool = None if pool is None else Access(pool, "other")
        self.table = f"{quote_ident(schema)}.approvals"

    @staticmethod
    def ddl(schema: str) -> list[str]:
        table = f"{quote_ident(schema)}.approvals"
        return [f"CREATE TABLE IF NOT EXISTS {table} (id bigserial PRIMARY KEY,"
                " asked_by text NOT NULL, session bigint, at timestamptz NOT NULL DEFAULT"
                " now(), status text NOT NULL DEFAULT 'pending', why jsonb, writes jsonb,"
                " decided_by text, decided_at timestamptz, comment text, waiting boolean"
                " NOT NULL DEFAULT true, txid bigint, fired_at timestamptz, outcome text,"
                " history jsonb NOT NULL DEFAULT '[]')",
                f"CREATE INDEX IF NOT EXISTS approvals_open ON {table} (status)"
                " WHERE status IN ('pending', 'approved')"]

    @staticmethod
    def recovery(schema: str) -> list[str]:
        """At start-up, alone: no COMMIT of a server that stopped waits any more."""
        table = f"{quote_ident(schema)}.approvals"
        return [f"UPDATE {table} SET waiting = false WHERE waiting"]

    @property
    def enabled(self) -> bool:
        return self._pool is not None

    def _pool_now(self) -> Access:
        if self._pool is None:
            raise RuntimeError("this server keeps no approvals")
        return self._pool

    async def ask(self, user: str, session: int, why: Any, writes: Any) -> dict[str, Any]:
        """A new pending request, a COMMIT waiting for it."""
        row = await self._pool_now().fetchrow(
            f"INSERT INTO {self.table} (asked_by, session, why, writes, history)"
            " VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb) RETURNING " + _FIELDS,
            user, session, as_json(why), as_json(writes), _event("asked", user))
        return _row(row)

    async def get(self, rid: int) -> dict[str, Any] | None:
        row = await self._pool_now().fetchrow(
            f"SELECT {_FIELDS} FROM {self.table} WHERE id = $1", rid)
        return None if row is None else _row(row)

    async def read(self, user: str | None) -> list[dict[str, Any]]:
        """Requests, newest first: one role's (None: everyone's)."""
        if self._pool is None:
            return []
        if user is None:
            rows = await self._pool.fetch(f"SELECT {_FIELDS} FROM {self.table} ORDER BY id DESC")
        else:
            rows = await self._pool.fetch(
                f"SELECT {_FIELDS} FROM {self.table} WHERE asked_by = $1 ORDER BY id DESC",
                user)
        return [_row(r) for r in rows]

    async def decide(self, rid: int, status: str, by: str, comment: str | None
                     ) -> dict[str, Any] | None:
        """``pending`` -> ``approved`` or ``denied``; None when it was not pending."""
        row = await self._pool_now().fetchrow(
            f"UPDATE {self.table} SET status = $2, decided_by = $3, decided_at = now(),"
            " comment = $4, history = history || $5::jsonb"
            " WHERE id = $1 AND status = 'pending' RETURNING " + _FIELDS,
            rid, status, by, comment, _event(status, by, comment=comment))
        return None if row is None else _row(row)

    async def stop_waiting(self, rid: int, event: str | None = None) -> dict[str, Any] | None:
        """The COMMIT stops waiting; the request as it is then (its decision, if one came
        first). ``event`` (timed out, canceled) is added to its history while pending."""
        row = await self._pool_now().fetchrow(
            f"UPDATE {self.table} SET waiting = false, history = CASE WHEN status ="
            " 'pending' AND $2::text IS NOT NULL THEN history || jsonb_build_array("
            "jsonb_build_object('event', $2::text, 'at', now())) ELSE history END"
            " WHERE id = $1 RETURNING " + _FIELDS, rid, event)
        return None if row is None else _row(row)

    async def claim(self, rid: int, by: str) -> bool:
        """``approved`` -> ``firing``: whether this caller fires it (once, ever)."""
        done = await self._pool_now().execute(
            f"UPDATE {self.table} SET status = 'firing', history = history || $2::jsonb"
            " WHERE id = $1 AND status = 'approved'", rid, _event("firing", by))
        return done.endswith(" 1")

    async def ended(self, rid: int, txid: int | None, error: str | None) -> None:
        """What firing did: ``fired``, or ``failed`` with the error that stopped it."""
        status = "failed" if error else "fired"
        await self._pool_now().execute(
            f"UPDATE {self.table} SET status = $2, txid = $3, fired_at = now(), outcome = $4,"
            " history = history || $5::jsonb WHERE id = $1", rid, status, txid,
            error or "fired", _event(status, None, txid=txid, error=error))

    async def pending(self) -> int:
        """How many requests wait for a decision (the metrics' gauge)."""
        if self._pool is None:
            return 0
        return int(await self._pool.fetchval(
            f"SELECT count(*) FROM {self.table} WHERE status = 'pending'"))

    @staticmethod
    def columns() -> Sequence[tuple[str, str, str]]:
        return APPROVAL_COLUMNS


def _row(row: Any) -> dict[str, Any]:
    out = dict(row)
    for name in _JSON:
        if out.get(name) is not None:
            out[name] = json.loads(out[name])
    return out
