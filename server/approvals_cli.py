"""``glove-scratchpad approvals list | show ID | approve ID | deny ID``: an approver's
decisions against a running server, over its own PostgreSQL protocol.

It is a client like any other: it signs in as ``--user`` (with ``--password``, or
``PGPASSWORD``) and runs ``scratchpad.approvals``, ``scratchpad.approve(id, comment)``
and ``scratchpad.deny(id, reason)``, so the server applies the same rules as to every
other way in (a role not in ``approvers``, or the one that asked, gets 42501). Errors
are printed as psql prints them, SQLSTATE included; the exit status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from typing import Any

from glove_scratchpad.names import DEFAULT_NAME, schema_names

__all__ = ["add_parser", "run"]

CONNECT_TIMEOUT = 10.0  # seconds to reach the server and sign in
WHY_SHOWN = 80  # characters of a request's reason in the list


def add_parser(sub: Any) -> None:
    """The ``approvals`` command and its four actions."""
    a = sub.add_parser("approvals", help="list, show, approve or deny approval requests of "
                                         "a running server (as an approver role)")
    a.add_argument("action", choices=("list", "show", "approve", "deny"))
    a.add_argument("id", nargs="?", type=int, help="the request (show, approve, deny)")
    a.add_argument("-m", "--comment", help="approve: a comment; deny: the reason, which the "
                   "agent's COMMIT error carries")
    a.add_argument("--all", action="store_true", help="list: every request, not only the "
                   "pending ones")
    a.add_argument("--host", default=None, help="default: $PGHOST or 127.0.0.1")
    a.add_argument("--port", type=int, default=None, help="default: $PGPORT or 55432")
    a.add_argument("--user", default=None, help="the approver role (default: $PGUSER or "
                   "your login name)")
    a.add_argument("--password", default=None, help="default: $PGPASSWORD")
    a.add_argument("--database", default=None, help="default: $PGDATABASE or scratchpad")
    a.add_argument("--name", default=DEFAULT_NAME, help="the server's --name (its schemas)")


def run(args: argparse.Namespace) -> int:
    if args.action != "list" and args.id is None:
        print(f"glove-scratchpad: approvals {args.action} takes a request id",
              file=sys.stderr)
        return 2
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import asyncpg

    env = os.environ
    try:
        conn = await asyncpg.connect(
            host=args.host or env.get("PGHOST") or "127.0.0.1",
            port=args.port or int(env.get("PGPORT") or 55432),
            user=args.user or env.get("PGUSER") or getpass.getuser(),
            password=args.password or env.get("PGPASSWORD"),
            database=args.database or env.get("PGDATABASE") or "scratchpad",
            timeout=CONNECT_TIMEOUT, statement_cache_size=0)
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        print(f"glove-scratchpad: could not connect: {exc}", file=sys.stderr)
        return 1
    system = schema_names(args.name).system
    try:
        if args.action == "list":
            rows = await conn.fetch(
                f"SELECT id, status, asked_by, at, decided_by, why FROM {system}.approvals"
                + ("" if args.all else " WHERE status = 'pending'") + " ORDER BY id")
            for r in rows:
                why = "; ".join(w["why"] for w in json.loads(r["why"] or "[]"))
                print(f"{r['id']}\t{r['status']}\t{r['asked_by']}\t"
                      f"{r['at'].isoformat(timespec='seconds')}\t{r['decided_by'] or ''}\t"
                      f"{why[:WHY_SHOWN]}")
            return 0
        if args.action == "show":
            row = await conn.fetchrow(f"SELECT to_jsonb(a) FROM {system}.approvals a "
                                      "WHERE id = $1", args.id)
            if row is None:
                print(f"glove-scratchpad: no approval request {args.id} that you may see",
                      file=sys.stderr)
                return 1
            print(json.dumps(json.loads(row[0]), indent=2, ensure_ascii=False))
            return 0
        said = await conn.fetchval(f"SELECT {system}.{args.action}($1, $2)", args.id,
                                   args.comment)
        print(said)
        return 0
    except asyncpg.PostgresError as exc:
        _error(exc)
        return 1
    finally:
        await conn.close()


def _error(exc: Any) -> None:
    """As psql says it: the severity, SQLSTATE and message, then DETAIL and HINT."""
    print(f"ERROR:  {exc.sqlstate}: {exc.args[0] if exc.args else exc}", file=sys.stderr)
    for label, value in (("DETAIL", getattr(exc, "detail", None)),
                         ("HINT", getattr(exc, "hint", None))):
        if value:
            print(f"{label}:  {value}", file=sys.stderr)
