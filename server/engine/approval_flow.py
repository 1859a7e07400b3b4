"""COMMIT as a request: a transaction whose writes need a person waits for the decision
before anything fires.

Rules:
- ``hold`` runs before a COMMIT (or a write outside BEGIN, a one-statement
  transaction) journals or fires anything. If no write needs approval it returns
  None and the COMMIT goes on as ever. Else the request is stored with the writes in
  full (what COMMIT would send, resolver and arguments, an HTTP API's method, URL and
  body) and why, and the COMMIT waits up to ``wait_s``:
  - approved: it claims the request and the COMMIT fires the writes as always, in
    order, once, through the journal, with a NOTICE naming the approver;
  - denied: nothing fires; 38003 with the approver's reason, and a HINT;
  - no decision in time: nothing fires yet; 57014 names the request, which stays
    pending: a later approval fires it (``approval_calls``), a denial drops it.
- A cancel, or the client gone, while it waits, fires nothing: the request stays
  pending, and is then fired or dropped by its decision, as after a timeout.
- A write outside BEGIN waits within its statement's timeout, too.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from glove_scratchpad import errors
from glove_scratchpad.background import hold as in_background
from glove_scratchpad.resources import Bindings, Resource

from .context import CallArgs
from .result import Call, Notice, StagedWrite
from .staged import sent

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Approval", "described", "hold"]

log = logging.getLogger(__name__)

ALONE_SHARE = 0.9  # of a write outside BEGIN's statement timeout, what its wait may take
_REQUEST_LINE = re.compile(r"Request: (\S+) (\S+)")
_STOPPING: set[asyncio.Task[Any]] = set()


class Approval:
    """An approved request that this COMMIT fires: what firing did goes on its record."""

    def __init__(self, st: Statement, rid: int, approver: str) -> None:
        self.st, self.rid, self.approver = st, rid, approver

    async def ended(self, txid: int | None, error: str | None) -> None:
        await self.st.services.approvals.store.ended(self.rid, txid, error)
        log.info("approval request %s %s (journal txid %s)", self.rid,
                 "failed: " + error if error else "fired", txid)


def _requests(resource: Resource, call: Call) -> list[dict[str, Any]]:
    """An HTTP API's requests of one call (method, URL, body), as its EXPLAIN says them."""
    explain = getattr(resource, "explain", None)
    if explain is None:
        return []
    name = resource.name
    if call.verb == "insert":
        shown = [(Bindings({k: (v,) for k, v in row.items()}, name), row)
                 for row in sent(call)["rows"]]
    else:
        given = CallArgs(dict(call.bindings or {}), call.where or {})
        shown = [(Bindings(given.values(), name, call.where),
                  dict(call.changes or {}) if call.verb == "update" else None)]
    out = []
    for b, body in shown:
        try:
            lines = explain(call.verb, b)
        except Exception:  # what it would send is still shown, as resolver and arguments
            lines = []
        for line in lines:
            found = _REQUEST_LINE.match(line)
            if found:
                out.append({"method": found[1], "url": found[2], "body": body})
    return out


def described(st: Statement, staged: list[StagedWrite],
              arguments: Callable[[Call], dict[str, Any]]) -> list[dict[str, Any]]:
    """The writes of a request in full, one element per call, in the order they fire:
    ``arguments`` are the journal's (what a later firing stages again)."""
    out = []
    for w in staged:
        resource = st.services.resources[w.resource]
        for c in w.calls:
            entry = {"write": w.id, "resource": w.resource, "verb": c.verb,
                     "resolver": f"{w.resource}.{c.verb}", "statement": w.statement,
                     **sent(c), "arguments": arguments(c), "idempotency_key": c.key,
                     "staged_at": w.staged_at}
            requests = _requests(resource, c)
            if requests:
                entry["requests"] = requests
            if w.link is not None and w.link.deferred:
                entry["deferred"] = ("planned at COMMIT from the rows "
                                     + ", ".join(f"#{i}" for i in w.link.after()) + " return")
            out.append(entry)
    return out


async def _stop_waiting(st: Statement, rid: int) -> None:
    """A canceled COMMIT no longer waits (start-up says so too, if the sidecar is gone)."""
    try:
        await st.services.approvals.store.stop_waiting(rid, "canceled")
    except Exception as exc:  # the server stopping: the next start clears it
        log.warning("approval request %s: could not record that its COMMIT stopped "
                    "waiting: %s", rid, type(exc).__name__)


async def hold(st: Statement, staged: list[StagedWrite], ctx: Statement,
               arguments: Callable[[Call], dict[str, Any]], alone: bool = False
               ) -> Approval | None:
    """Before ``staged`` fire: None when none needs approval; else the approved request
    that this COMMIT now fires. Raises when it is denied, or no decision came in time."""
    approvals = st.services.approvals
    if not approvals.active:
        return None
    touched = list(ctx.touched.values())
    approvals.refuse_tainted(st.tx, touched)
    why = approvals.reason(st.tx, touched)
    reasons: list[dict[str, Any]] = [
        {"write": w.id, "resource": w.resource, "verb": w.verb, "why": said}
        for w in staged if why is not None and (said := why(w.resource, w.verb))]
    if not reasons:
        return None
    system = st.services.schemas.system
    row = await approvals.store.ask(st.user, st.session_id, reasons,
                                    described(st, staged, arguments))
    rid = row["id"]
    await approvals.count()
    approvals.notify(row)
    log.info("approval request %s asked by %s: %s", rid, st.user,
             "; ".join(r["why"] for r in reasons)[:500])
    seconds = approvals.rules.wait_s
    if alone:
        seconds = min(seconds, st.timeout * ALONE_SHARE)
    try:
        decided = await approvals.wait(rid, seconds)
    except asyncio.CancelledError:
        in_background(_stop_waiting(st, rid), _STOPPING)
        raise
    if decided is None:
        decided = await approvals.store.stop_waiting(rid, "timed out")
    if decided is None or decided["status"] == "pending":
        raise errors.QueryCanceled(
            f"canceling COMMIT: no decision on approval request {rid} came within "
            f"{seconds:g} s; nothing fired, and the request stays pending",
            detail="; ".join(f"#{r['write']} {r['resource']} {r['verb']}: {r['why']}"
                             for r in reasons)[:2000],
            hint=f"Follow it: SELECT status, decided_by, comment FROM {system}.approvals "
            f"WHERE id = {rid}. An approval fires its writes then, once; a denial drops "
            "them. Do not send them again meanwhile.")
    by, comment = decided["decided_by"], decided["comment"]
    if decided["status"] == "denied":
        raise errors.ProhibitedSqlStatementAttempted(
            f"COMMIT denied by {by}: {comment or 'no reason given'}",
            detail=f"approval request {rid}; nothing fired: "
            + "; ".join(f"#{w.id} {w.summary}" for w in staged)[:2000],
            hint="The transaction is over and nothing was sent. Change what it sends as "
            "the reason asks, or ask the approver, before trying again.")
    if decided["status"] != "approved" or not await approvals.store.claim(rid, st.user):
        raise errors.InvalidTransactionState(
            f"approval request {rid} is {decided['status']}: this COMMIT does not fire it",
            hint=f"SELECT status, txid, outcome FROM {system}.approvals WHERE id = {rid} "
            "says what became of it.")
    ctx.notice(Notice(f"approved by {by} (approval request {rid})"
                      + (f": {comment}" if comment else ""),
                      detail=f"waited {time.time() - decided['at'].timestamp():.1f} s"))
    return Approval(st, rid, by)
