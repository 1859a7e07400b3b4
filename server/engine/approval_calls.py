"""``SELECT scratchpad.approve(id, 'comment')``, ``SELECT scratchpad.deny(id, 'reason')``
and ``scratchpad.approvals``: an approver's decisions, and who sees which request.

Rules:
- Only a role of ``[approvals] approvers`` decides, and never on a request its own
  role asked: anyone else gets 42501, before anything of the request is read.
  Every way in (the wire, the CLI, the console, the agent tool) is a session that
  runs these same statements, so the rule holds by every path.
- A decision is one atomic change of a pending request (``ApprovalStore.decide``).
  If a COMMIT waits for it, that COMMIT fires the writes (or fails, denied); if
  none does (it timed out, its client went away, the server restarted), an approval
  fires them here, as the role that asked, in order, once, through the journal.
- An approved request that nothing fired (its COMMIT's server stopped just after
  the decision) is fired by approving it again.
- ``scratchpad.approvals`` shows an approver every request, anyone else their
  role's own.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors, metrics

from . import commit
from .cache import call_number, system_call_name
from .context import Request
from .overlay import Overlay
from .restage import restaged_write
from .result import Notice, Result
from .session_settings import SessionSettings
from .transaction import Transaction

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["decide", "rows"]

log = logging.getLogger(__name__)


async def rows(st: Statement) -> list[dict[str, Any]]:
    """``scratchpad.approvals`` as this role sees it."""
    approvals = st.services.approvals
    everyone = approvals.is_approver(st.user) or st.policy.admin
    return await approvals.store.read(None if everyone else st.user)


def _comment(call: ast.FuncCall, params: list[Any]) -> str | None:
    args = list(call.args or ())
    if len(args) < 2:
        return None
    arg = args[1].arg if isinstance(args[1], ast.TypeCast) else args[1]
    if isinstance(arg, ast.A_Const):
        return None if arg.isnull else str(getattr(arg.val, "sval", ""))
    value = None
    if isinstance(arg, ast.ParamRef) and arg.number and 0 < arg.number <= len(params):
        value = getattr(params[arg.number - 1], "value", params[arg.number - 1])
    return value.decode(errors="replace") if isinstance(value, bytes) else (
        None if value is None else str(value))


def _said(text: str, notices: list[Notice] | None = None) -> Result:
    return Result.text("SELECT 1", ["decision"], [(text,)], notices=notices or [])


async def decide(st: Statement, call: ast.FuncCall, params: list[Any]) -> Result:
    """An approver's ``approve`` or ``deny`` of request ``id``."""
    name = system_call_name(call)
    system = st.services.schemas.system
    approvals = st.services.approvals
    approvals.check_approver(st.user, system)
    try:
        rid = int(call_number(call, params))
    except (TypeError, ValueError):
        raise errors.InvalidParameterValue(
            f"{system}.{name}() takes a request id",
            hint=f"SELECT id, asked_by, why FROM {system}.approvals WHERE status = "
            "'pending' lists the requests.") from None
    if not approvals.store.enabled:
        raise errors.FeatureNotSupported("this server keeps no approval requests",
                                         hint="Start it with its sidecar.")
    row = await approvals.store.get(rid)
    if row is None:
        raise errors.InvalidParameterValue(
            f"there is no approval request {rid}",
            hint=f"SELECT id, asked_by, why FROM {system}.approvals WHERE status = "
            "'pending' lists the requests.")
    approvals.check_approver(st.user, system, row["asked_by"])
    comment = _comment(call, params)
    if row["status"] == "pending":
        status = "approved" if name == "approve" else "denied"
        decided = await approvals.store.decide(rid, status, st.user, comment)
        if decided is not None:
            metrics.approval_decided(status, time.time() - decided["at"].timestamp())
            approvals.wake(rid)
            await approvals.count()
            log.info("approval request %s %s by %s", rid, status, st.user)
            if status == "denied":
                return _said(f"denied request {rid}: nothing of it fires"
                             + ("; the COMMIT that waits for it fails with your reason"
                                if decided["waiting"] else ""))
            if decided["waiting"]:
                return _said(f"approved request {rid}: the COMMIT that waits for it fires "
                             "its writes now")
            row = decided
        else:
            row = await approvals.store.get(rid) or row
    if name == "approve" and row["status"] == "approved" and not row["waiting"]:
        return await _fire(st, row)
    raise errors.InvalidTransactionState(
        f"approval request {rid} is already {row['status']}"
        + (f" by {row['decided_by']}" if row["decided_by"] else ""),
        hint=f"SELECT status, decided_by, comment, txid, outcome FROM {system}.approvals "
        f"WHERE id = {rid} says what became of it.")


def _as_asker(st: Statement, row: dict[str, Any]) -> Statement:
    """A statement of the role that asked, in a transaction of its own: its writes are
    made with its credentials, and audited as its own."""
    tx = Transaction(SessionSettings())
    return dataclasses.replace(
        st, user=row["asked_by"], session_id=row["session"] or 0, tx=tx,
        overlay=Overlay(tx, st.services.limits.read_your_writes_s),
        write_ids=itertools.count(1), request=Request(), in_flight={}, called=[], calls=0,
        prepared=None, late_cancel=False, sql="COMMIT")


async def _fire(st: Statement, row: dict[str, Any]) -> Result:
    """An approved request that no COMMIT waits for: its writes fired now, once."""
    rid, system = row["id"], st.services.schemas.system
    approvals = st.services.approvals
    if not await approvals.store.claim(rid, st.user):
        raise errors.InvalidTransactionState(
            f"approval request {rid} is already being fired",
            hint=f"SELECT status, txid, outcome FROM {system}.approvals WHERE id = {rid}.")
    asker = _as_asker(st, row)
    notices: list[Notice] = []
    try:
        staged = []
        for write in row["writes"]:
            if write.get("deferred"):  # needs the rows of a write before it: not kept
                notices.append(Notice(
                    f"not fired: #{write['write']} {write['resolver']} was "
                    f"{write['deferred']}, which only its COMMIT had",
                    hint=f"Run it again: {write['statement'][:200]}"))
                continue
            staged.append(restaged_write(asker, write, seen=False))
    except errors.SqlError as exc:
        await approvals.store.ended(rid, None, exc.message)
        raise
    ctx = asker.part("COMMIT", request=Request(), timed=False)
    txid, error = await commit.fire_decided(asker, staged, ctx)
    await approvals.store.ended(rid, txid, error)
    log.info("approval request %s fired by %s's approval (journal txid %s): %s", rid,
             st.user, txid, error or "fired")
    where = f"{system}.journal txid {txid}"
    if error is not None:
        raise errors.ExternalRoutineError(
            f"approved request {rid}, and its writes failed: {error}",
            hint=f"{where} shows each write's outcome; SELECT {system}.restage({txid}) "
            "stages again those that did not fire.")
    return _said(f"approved request {rid}: its {len(staged)} write"
                 f"{'s' if len(staged) != 1 else ''} fired ({where})",
                 notices + ctx.notices)
