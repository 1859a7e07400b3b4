"""The commit journal: every write a COMMIT makes, and its outcome, in the sidecar.

Rules:
- One row per write (one call of a write tool), keyed by ``(txid, seq)``: the
  transaction, numbered by a sidecar sequence (unique across processes and
  restarts), and the write's place in it.
- A write is journaled before it fires, and each change of its status is
  awaited, so another session reads it as it is: ``staged`` -> ``firing`` ->
  ``fired``, ``failed``, or ``in doubt`` (sent, and no answer told what it did);
  the writes after one that did not fire become ``not run``.
- At start-up, a write found ``firing`` (its server died while the tool ran)
  becomes ``in doubt``, and one still ``staged`` becomes ``not run``, when no
  other server of the name runs.
- Each row carries the ``instance`` that journaled it. While others run, a
  server settles so (``settle_lost``) only the rows of an instance whose
  ``INSTANCE_LOCK`` is free (gone with its connection), never its own: at
  start, every ``LOST_POLL`` seconds, and before each read. One statement
  changes each row once, whoever runs it, and records each write it makes
  ``in doubt`` in the audit of calls.
- ``idempotency_key`` is the write's own, made when it was staged: a restaged
  write keeps it, so a tool can tell a retry from a new request.
- A user reads their own rows (an administrator: everyone's).
- Every exchange goes through the one access layer (``_access.Access``): while the
  sidecar restarts it is waited for, and its errors are ``errors.SqlError``. A
  status the journal could not record even so (the sidecar gone for good) is kept
  and tried again with the next change; it never fails a write that fired.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from glove_scratchpad import errors
from glove_scratchpad.names import quote_ident

from ._access import Access
from ._claim import INSTANCE_LOCK

__all__ = ["FINAL_STATUSES", "JOURNAL_COLUMNS", "LOST_POLL", "Journal", "JournalEntry",
           "as_json"]

log = logging.getLogger(__name__)

JOURNAL_COLUMNS = [
    ("txid", "bigint"), ("seq", "integer"), ("user_name", "text"), ("statement", "text"),
    ("resource", "text"), ("verb", "text"), ("arguments", "jsonb"),
    ("idempotency_key", "text"), ("status", "text"), ("result", "jsonb"), ("error", "text"),
    ("staged_at", "timestamp with time zone"), ("fired_at", "timestamp with time zone"),
]
PRIVATE_SCHEMA = "_gs_audit"  # the default server's; a named one's is schema_names().private
FINAL_STATUSES = frozenset({"fired", "failed", "not run", "in doubt"})
LOST_POLL = 2.0  # seconds between looks for the writes of servers that are gone
LOST_ERROR = "its server (instance %s) stopped while it ran"  # format()'s
_RESULT_CHARS = 1_000_000  # a tool's answer kept in the journal, at most (as JSON text)

_FIELDS = ", ".join(n for n, _ in JOURNAL_COLUMNS)


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One write as it is journaled when its COMMIT starts."""

    statement: str
    resource: str
    verb: str
    arguments: Any  # JSON-able: {"rows": […]}, {"set": {…}, "where": {…}}, {"where": {…}}
    key: str
    staged_at: float  # time.time()


def as_json(value: Any) -> str:
    """A value as JSON text that jsonb takes, whatever a tool returned: models, dates and
    decimals as JSON gives them, bytes as hex, NaN and Infinity as text, and a NUL
    character (which jsonb cannot hold) as the six characters ``\\u0000``."""
    plain = to_jsonable_python(_python(value), by_alias=True, fallback=str)
    return json.dumps(_jsonb(plain), ensure_ascii=False)


def _python(value: Any) -> Any:
    """Models as dicts and bytes as hex, all the way down (a model's own serializer would
    decode bytes as UTF-8, and fail on others)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {k: _python(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_python(v) for v in value]
    return value


def _jsonb(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\\u0000")
    if isinstance(value, dict):
        return {k: _jsonb(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonb(v) for v in value]
    return value


class Journal:
    """The journal table, through the server's own (not the agent's) connections."""

    def __init__(self, pool: asyncpg.Pool | None, schema: str = PRIVATE_SCHEMA, *,
                 name: str = "", instance: int | None = None) -> None:
        self._pool = None if pool is None else Access(pool, "journal")
        self.table, self._txids = _names(schema)
        self._calls = f"{quote_ident(schema)}.calls"  # the audit's table, beside it
        self.name = name  # the server's name and instance number: whose rows are whose
        self.instance = instance
        self._unrecorded: list[tuple[str, tuple[Any, ...]]] = []  # to try again
        self._retrying = asyncio.Lock()
        self.committing: set[int] = set()  # txids whose COMMIT runs in this server

    @staticmethod
    def ddl(schema: str = PRIVATE_SCHEMA) -> list[str]:
        cols = ", ".join(f'"{n}" {t}' for n, t in JOURNAL_COLUMNS)
        table, txids = _names(schema)
        return [f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}",
                f"CREATE SEQUENCE IF NOT EXISTS {txids}",
                f"CREATE TABLE IF NOT EXISTS {table} ({cols}, PRIMARY KEY (txid, seq))",
                f"CREATE INDEX IF NOT EXISTS journal_user ON {table} (user_name, txid)",
                f"CREATE INDEX IF NOT EXISTS journal_key ON {table} (idempotency_key)",
                # What start-up looks for: the few writes a server left unfinished.
                f"CREATE INDEX IF NOT EXISTS journal_open ON {table} (status)"
                " WHERE status IN ('staged', 'firing')",
                # Added by a later version: rows from before it have none, and are left
                # to a start when no server runs.
                f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS instance integer"]

    @property
    def enabled(self) -> bool:
        return self._pool is not None

    @staticmethod
    def recovery(schema: str = PRIVATE_SCHEMA) -> list[str]:
        """What start-up runs when no other server of its name is up: what a dead server
        left ``staged`` is ``not run``, what it left ``firing`` is ``in doubt``."""
        table, _ = _names(schema)
        return [f"UPDATE {table} SET status = 'not run' WHERE status = 'staged'",
                f"UPDATE {table} SET status = 'in doubt' WHERE status = 'firing'"]

    async def new_txid(self) -> int | None:
        """A transaction id for ``open`` (None without a journal)."""
        if self._pool is None:
            return None
        return int(await self._pool.fetchval(f"SELECT nextval('{self._txids}')"))

    async def open(self, user: str, entries: Sequence[JournalEntry], txid: int | None,
                   *, first: int = 1, status: str | None = None) -> int | None:
        """Journal a COMMIT's writes under ``txid`` (from ``new_txid``) as seqs from
        ``first``: the first ``firing``, the rest ``staged``; or each ``status`` (``not
        run``: the writes a failure stopped before they were journaled). Safe to repeat
        when an attempt's outcome is unknown (its reply lost with the connection): rows
        already there are kept as they are."""
        if self._pool is None or not entries or txid is None:
            return None
        await self._retry_unrecorded()
        await self._pool.execute(
            f"INSERT INTO {self.table} (txid, seq, user_name, statement, resource, verb,"
            " arguments, idempotency_key, status, staged_at, instance)"
            " SELECT $1, u.seq, $2, u.st, u.r, u.v, u.a::jsonb, u.k,"
            " coalesce($11, CASE WHEN u.seq = $10 THEN 'firing' ELSE 'staged' END),"
            " to_timestamp(u.at), $12"
            " FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[],"
            " $8::text[], $9::float8[]) AS u(seq, st, r, v, a, k, at)"
            " ON CONFLICT (txid, seq) DO NOTHING",
            txid, user, list(range(first, first + len(entries))),
            [e.statement[:4000] for e in entries],
            [e.resource for e in entries], [e.verb for e in entries],
            [as_json(e.arguments) for e in entries], [e.key for e in entries],
            [e.staged_at for e in entries], first, status, self.instance)
        self.committing.add(txid)
        return txid

    async def settle(self, txid: int | None, seq: int, status: str, *, result: Any = None,
                     error: str | None = None, next_seq: int | None = None) -> bool:
        """A write's outcome (``fired``, ``failed``, ``in doubt``) and the next write
        ``firing``, in one round trip. False when the next write's ``firing`` could not be
        recorded: then it must not fire (this outcome is kept, to be recorded later)."""
        if txid is None:
            return True
        fired_at = dt.datetime.now(dt.UTC) if status == "fired" else None
        try:
            text = None if result is None else as_json(result)
        except Exception:  # never fail a write that fired over how its answer is kept
            text = json.dumps({"unrecorded": repr(result)[:_RESULT_CHARS]})
        if text is not None and len(text) > _RESULT_CHARS:
            text = json.dumps({"truncated": text[:_RESULT_CHARS]})
        sql = (f"UPDATE {self.table} SET"
               " status = CASE WHEN seq = $2 THEN $3 ELSE 'firing' END,"
               " result = CASE WHEN seq = $2 THEN $4::jsonb ELSE result END,"
               " error = CASE WHEN seq = $2 THEN $5 ELSE error END,"
               " fired_at = CASE WHEN seq = $2 THEN $6 ELSE fired_at END"
               " WHERE txid = $1 AND (seq = $2 OR seq = $7)")
        args = (txid, seq, status, text, error and error[:4000], fired_at)
        if await self._record(sql, (*args, next_seq or -1)):
            return True
        self._unrecorded.append((sql, (*args, -1)))
        return next_seq is None

    async def not_run(self, txid: int | None, first: int) -> None:
        """The writes from ``first`` on did not fire (an earlier one failed)."""
        if txid is None:
            return
        sql = (f"UPDATE {self.table} SET status = 'not run' WHERE txid = $1 AND seq >= $2"
               " AND status = 'staged'")
        if not await self._record(sql, (txid, first)):
            self._unrecorded.append((sql, (txid, first)))

    def abandon(self, txid: int | None) -> None:
        """A COMMIT gave up before firing anything: whatever an attempt of ``open`` may
        have written for it is ``not run`` (recorded as soon as the sidecar takes it)."""
        if txid is not None and self._pool is not None:
            self._unrecorded.append((
                f"UPDATE {self.table} SET status = 'not run' WHERE txid = $1"
                " AND status IN ('firing', 'staged')", (txid,)))

    def close_transaction(self, txid: int | None) -> None:
        self.committing.discard(txid)

    async def _record(self, sql: str, args: tuple[Any, ...]) -> bool:
        """Run one change now; False (logged) if the sidecar cannot take it."""
        if self._pool is None:
            return True
        await self._retry_unrecorded()
        try:
            await self._pool.execute(sql, *args)
        except errors.SqlError:
            log.warning("could not journal a write's status; it is kept to be recorded later",
                        exc_info=True)
            return False
        return True

    async def _retry_unrecorded(self) -> None:
        """Record what could not be, in order, one writer at a time: two coroutines taking
        the same first change would each pop one, and lose the second."""
        async with self._retrying:
            while self._unrecorded and self._pool is not None:
                sql, args = self._unrecorded[0]
                try:
                    await self._pool.execute(sql, *args)
                except errors.SqlError:
                    return
                self._unrecorded.pop(0)

    async def settle_lost(self) -> list[dict[str, Any]]:
        """What servers of this name that are gone left unfinished, settled as a start
        when none runs would: ``firing`` is ``in doubt`` (audited as such), ``staged``
        is ``not run``. The rows made ``in doubt``: each is changed once, by one server.

        An instance is gone when its ``INSTANCE_LOCK`` is free. The lock is tried
        for this statement's transaction only (so that two servers looking at once
        do not both settle it), and only for the instances that left such rows."""
        if self._pool is None or self.instance is None:
            return []
        rows = await self._pool.fetch(
            "WITH open AS MATERIALIZED (SELECT DISTINCT instance FROM"
            f" {self.table} WHERE status IN ('staged', 'firing') AND instance <> $1),"
            " gone AS MATERIALIZED (SELECT instance FROM open WHERE"
            " pg_try_advisory_xact_lock($2, hashtext($3 || '/' || instance::text))),"
            f" settled AS (UPDATE {self.table} j SET"
            " status = CASE j.status WHEN 'firing' THEN 'in doubt' ELSE 'not run' END,"
            " error = CASE j.status WHEN 'firing' THEN coalesce(j.error,"
            " format($4, j.instance)) ELSE j.error END"
            " FROM gone WHERE j.instance = gone.instance"
            " AND j.status IN ('staged', 'firing')"
            " RETURNING j.txid, j.seq, j.user_name, j.statement, j.resource, j.verb,"
            " j.instance, j.status, j.error),"
            f" audited AS (INSERT INTO {self._calls} (at, user_name, statement, resource,"
            " verb, arguments, status, error)"
            # The journal's arguments are the write's own (what a restage sends again),
            # which may hold what the audit never keeps: the audit names the row.
            " SELECT now(), user_name, statement, resource, verb,"
            " jsonb_build_object('txid', txid, 'seq', seq), status, error"
            " FROM settled WHERE status = 'in doubt')"
            " SELECT txid, seq, user_name, resource, verb, instance FROM settled"
            " WHERE status = 'in doubt' ORDER BY txid, seq",
            self.instance, INSTANCE_LOCK, self.name, LOST_ERROR)
        for r in rows:
            log.warning("journal txid %s, seq %s (%s %s of %s) is in doubt: its server "
                        "(instance %s) stopped while it ran", r["txid"], r["seq"],
                        r["resource"], r["verb"], r["user_name"], r["instance"])
        return [dict(r) for r in rows]

    async def read(self, user: str | None, txids: Sequence[int] = ()) -> list[dict[str, Any]]:
        """Journal rows, oldest first: one user's (None: everyone's), of some
        transactions (none given: of all); what a server that is gone left firing is
        read ``in doubt``."""
        if self._pool is None:
            return []
        await self._retry_unrecorded()
        try:
            await self.settle_lost()
        except errors.SqlError:  # the read says what it can
            log.info("could not look for the writes of stopped servers", exc_info=True)
        args: list[str | list[int]]
        where, args = [], []
        if user is not None:
            args.append(user)
            where.append(f"user_name = ${len(args)}")
        if txids:
            args.append(list(txids))
            where.append(f"txid = ANY(${len(args)}::bigint[])")
        sql = f"SELECT {_FIELDS} FROM {self.table}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = await self._pool.fetch(sql + " ORDER BY txid, seq", *args)
        return [{**r, "arguments": _loads(r["arguments"]), "result": _loads(r["result"])}
                for r in rows]

    async def prune(self, days: float) -> int:
        """Forget the transactions whose every write is final and older than ``days``
        (by when each fired, or was staged); how many rows went."""
        if self._pool is None:
            return 0
        done = await self._pool.execute(
            f"DELETE FROM {self.table} WHERE txid IN (SELECT txid FROM {self.table}"
            " GROUP BY txid HAVING bool_and(status = ANY($2::text[]))"
            " AND max(coalesce(fired_at, staged_at)) < now() - make_interval(secs => $1))",
            days * 86400, sorted(FINAL_STATUSES))
        return int(done.split()[-1])

    async def fired_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of these idempotency keys a write has fired with (in any transaction)."""
        if self._pool is None or not keys:
            return set()
        rows = await self._pool.fetch(
            f"SELECT DISTINCT idempotency_key FROM {self.table}"
            " WHERE idempotency_key = ANY($1::text[]) AND status = 'fired'", list(keys))
        return {r[0] for r in rows}


def _names(schema: str) -> tuple[str, str]:
    """The journal table and its txid sequence in ``schema``, quoted."""
    return f"{quote_ident(schema)}.journal", f"{quote_ident(schema)}.txids"


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
