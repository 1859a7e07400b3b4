"""COMMIT: staged writes journaled, fired in order and reported.

Rules:
- Every write is journaled (``catalog.Journal``) before it fires: a COMMIT's
  writes are written to the journal first, and each is ``firing`` there while
  its tool runs. A write outside BEGIN is a transaction of its own, journaled
  the same way. If the journal cannot take them, nothing fires.
- The first failure stops the rest (``not run``) and ends the transaction, as in
  Postgres; the error's DETAIL lists every write's outcome, and the journal
  keeps them.
- Each call passes its idempotency key (``CallContext.idempotency_key``), made
  when it was staged; writes are never retried by themselves.
- The NOTICE of a fired write names its journal row and shows what the tool
  returned (``fired.py``: what a fired write tells its client). Once a tool has
  acted, nothing turns its write into a failure: an answer that does not fit the
  table (or that the tool warned of) is a WARNING, and the write is ``fired``.
- Writes, once a COMMIT starts them, run to the end in a task of their own
  (``background.hold``), shielded from the statement's cancellation: a client that goes
  away mid-COMMIT (its connection's task is cancelled) stops none of them half
  way, and the journal ends with each one's outcome. Only the server's loop
  ending (a shutdown past its grace) cancels a write that fires: ``in doubt``.
- A write sent with no answer to tell what it did (``TransactionResolutionUnknown``:
  a timeout, a connection lost after sending) is ``in doubt``, never ``failed``;
  the client gets 08007 and a HINT to check before anything sends it again.
- A write outside BEGIN is shielded the same way once its request is sent: a cancel
  or the statement timeout that comes later is too late, the write runs to its end and
  its outcome is the answer, with a NOTICE that says so. One that comes before the
  request leaves stops it: nothing is sent, and the journal says ``not run``.
- ``restage.restage(txid)`` stages again the writes that did not fire.
- Writes that a rule says a person approves wait for the decision before anything of
  them is journaled or fires (``approval_flow.hold``); approved, they fire as here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from glove_scratchpad import errors, metrics
from glove_scratchpad.background import hold
from glove_scratchpad.catalog import JournalEntry, unreachable
from glove_scratchpad.resources import Bindings

from . import approval_flow, resolve
from .context import CallArgs, Request
from .fired import fired_notice, in_doubt_hint, returned_rows, unread
from .overlay import as_dict
from .result import Call, Notice, Result, StagedWrite
from .staged import folded_into, pending

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["commit", "fire_decided", "fire_one", "fire_writes", "in_doubt_hint",
           "past_cancel"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_ABANDONING: set[asyncio.Task[None]] = set()  # journal updates of canceled COMMITs
_FIRING: set[asyncio.Task[Any]] = set()  # writes firing, whether or not a client waits


class _Gate:
    """Whether a write outside BEGIN has been sent: until then, a cancel stops it."""

    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = False

    def send(self) -> None:
        """The request is about to leave: from here on, a cancel is too late."""
        self.sent = True


class _Stopped(Exception):
    """A write failed: the ones after it did not fire."""

    def __init__(self, write: StagedWrite, error: errors.SqlError, txid: int | None) -> None:
        super().__init__(error.message)
        self.write, self.error, self.txid = write, error, txid


def journal_arguments(call: Call) -> dict[str, Any]:
    """A call's input, as the journal keeps it and ``restage`` reads it back: an insert's
    rows; an update's SET; an update's or delete's keys (``where``) and the filters'
    conditions the WHERE gave (``conditions``)."""
    if call.verb == "insert":
        return {"rows": [as_dict(r) for r in call.rows]}
    out: dict[str, Any] = {"set": dict(call.changes or {})} if call.verb == "update" else {}
    out["where"] = dict(call.bindings or {})
    if call.where:
        out["conditions"] = {c: [list(cond) for cond in conds]
                             for c, conds in call.where.items()}
    return out


def _entries(staged: list[StagedWrite]) -> list[JournalEntry]:
    """The journal's rows of some writes, one per call. A write a chain plans at COMMIT
    says so while its arguments are the ones it was staged with."""
    out = []
    for w in staged:
        for c in w.calls:
            arguments = journal_arguments(c)
            if w.link is not None and w.link.deferred:
                arguments["deferred"] = ("planned at COMMIT from the rows "
                                         + ", ".join(f"#{i}" for i in w.link.after())
                                         + " return")
            out.append(JournalEntry(w.statement, w.resource, c.verb, arguments, c.key,
                                    w.staged_at))
    return out


def _deferred(write: StagedWrite) -> bool:
    """A chain's write that COMMIT plans again, once the writes it reads have fired."""
    return write.link is not None and write.link.deferred


async def _open(st: Statement, staged: list[StagedWrite], txid: int | None = None,
                first: int = 1) -> int | None:
    """The writes in the journal, before any of them fires, from seq ``first`` of
    transaction ``txid`` (a new one when None); the journal waits for a sidecar that
    restarts."""
    journal = st.services.journal
    entries = _entries(staged)
    if not entries:
        return txid
    fresh = txid is None
    try:
        # One txid for every attempt: an attempt whose reply was lost may have written
        # its rows, and a second txid would leave them firing forever. The journal
        # waits for a sidecar that restarts (catalog's one reconnect policy).
        if txid is None:
            txid = await journal.new_txid()
        return await journal.open(st.user, entries, txid, first=first)
    except asyncio.CancelledError:
        if fresh:
            journal.abandon(txid)  # canceled before anything fired: ``not run``
        raise
    except errors.SqlError as exc:
        if fresh:
            journal.abandon(txid)
        if not unreachable(exc):
            log.error("the journal refused a COMMIT's writes", exc_info=exc)
            raise errors.InternalError(
                "COMMIT could not journal its writes, so none of them fired",
                hint="The transaction is over and nothing was called. Report this to "
                "the server's operator.") from exc
        raise errors.InvalidTransactionState(
            "COMMIT could not journal its writes, so none of them fired: "
            f"{type(exc).__name__}: {exc.message}"[:1000],
            hint="The transaction is over and nothing was called. Run it again in "
            "a moment.") from exc


def _segments(staged: list[StagedWrite]) -> list[list[StagedWrite]]:
    """The writes cut before each one a chain plans at COMMIT: a segment is journaled
    when the writes before it have fired, and its first write has been planned."""
    out: list[list[StagedWrite]] = []
    for w in staged:
        if not out or _deferred(w):
            out.append([])
        out[-1].append(w)
    return out


async def fire_writes(st: Statement, staged: list[StagedWrite], ctx: Statement,
                      gate: _Gate | None = None) -> tuple[int | None, list[list[dict]]]:
    """Journal and fire writes, in order: the txid, and the rows each write's tool gave
    back. The first failure raises ``_Stopped``.

    A write of a chain that reads what an INSERT before it returns is planned when
    that INSERT has fired (``chains.replan``); its calls, and those after it, are
    journaled then, each before it fires, as the journal's next seqs."""
    journal = st.services.journal
    returned: list[list[dict]] = [[] for _ in staged]
    index = {id(w): i for i, w in enumerate(staged)}
    txid: int | None = None
    journaled = 0  # the writes journaled so far (whole segments)
    seq = 0  # the last seq journaled
    try:
        for n, segment in enumerate(_segments(staged)):
            head = segment[0]
            if head.link is not None and head.link.deferred:
                try:
                    await head.link.replan(st, head, ctx)
                except errors.SqlError as exc:
                    head.status, head.error = "failed", exc.message
                    raise _Stopped(head, exc, txid) from None
            try:
                txid = await _open(st, segment, txid, seq + 1)
            except errors.SqlError as exc:
                if n == 0:
                    raise
                head.status, head.error = "failed", exc.message
                raise _Stopped(head, exc, txid) from None
            first, seq, journaled = seq, seq + sum(len(w.calls) for w in segment), \
                journaled + len(segment)
            await _fire_segment(st, segment, ctx, txid, first, returned, index, gate)
    except _Stopped as stop:
        seen = False
        for w in staged:
            if w is stop.write:
                seen = True
            elif seen:
                w.status = "not run"
        rest = staged[journaled:]
        if txid is not None and rest:  # never journaled: journaled now, as not run
            await journal.open(st.user, _entries(rest), txid, first=seq + 1,
                               status="not run")
        raise
    finally:
        journal.close_transaction(txid)
    return txid, returned


async def _fire_segment(st: Statement, segment: list[StagedWrite], ctx: Statement,
                        txid: int | None, seq: int, returned: list[list[dict]],
                        index: dict[int, int], gate: _Gate | None = None) -> None:
    """Fire one segment's calls, journaled from ``seq + 1``. With a ``gate``, a cancel
    before the request leaves journals it ``not run``."""
    journal = st.services.journal
    calls = [(w, c) for w in segment for c in w.calls]
    first = seq + 1
    for i, (write, call) in enumerate(calls):
        seq = first + i
        if txid is not None:
            write.journal.append((txid, seq))
        try:
            out = await _fire_call(st, write, call, ctx, gate)
        except errors.SqlError as exc:
            # Sent with no answer to tell what it did: in doubt, not failed, so that
            # nothing sends it again without being told (restage's force).
            outcome = ("in doubt" if isinstance(exc, errors.TransactionResolutionUnknown)
                       else "failed")
            write.status, write.error = outcome, exc.message
            metrics.write(write.resource, outcome)
            await journal.settle(txid, seq, outcome, error=exc.message)
            await journal.not_run(txid, seq + 1)
            raise _Stopped(write, exc, txid) from None
        except asyncio.CancelledError:
            if gate is not None and not gate.sent:
                # Canceled before its request left: it did not fire, nor will the rest.
                write.status = "not run"
                await journal.settle(txid, seq, "not run", error="canceled before it was sent")
                await journal.not_run(txid, seq + 1)
                raise
            # The tool may have run: the journal says so, and nothing after it fires.
            hold(_abandon(st, txid, seq), _ABANDONING)
            raise
        rows = returned_rows(st.services.resources[write.resource], call, out, ctx)
        returned[index[id(write)]].extend(rows)
        last = i == len(calls) - 1
        if last or calls[i + 1][0] is not write:
            write.status = "fired"
            metrics.write(write.resource, "fired")
            if write.link is not None:
                await write.link.fired(st, write, returned[index[id(write)]] or [
                    as_dict(r) for c in write.calls for r in c.rows])
        if not await journal.settle(txid, seq, "fired", result=out,
                                    next_seq=None if last else seq + 1):
            nxt = calls[i + 1][0]
            error = errors.InvalidTransactionState(
                "the journal could not record the next write as firing, so it did not "
                "fire", hint="The sidecar is unavailable: run what is left again in a "
                "moment.")
            nxt.status, nxt.error = "failed", error.message
            raise _Stopped(nxt, error, txid)
    for write in segment:
        if not write.calls:
            write.status = "fired"  # nothing to call: planned at COMMIT to no row
            metrics.write(write.resource, "fired")


async def _fire_shielded(st: Statement, staged: list[StagedWrite], ctx: Statement,
                         gate: _Gate | None = None) -> tuple[int | None, list[list[dict]]]:
    """``fire_writes`` in a task of its own, which the caller's cancellation (a client
    gone) does not stop: the writes finish and are journaled, none twice.

    With a ``gate`` (a write outside BEGIN), a cancel or a timeout stops the write if
    its request has not left, and then waits for the journal to say ``not run``; once
    it has left, the cancel is too late: this waits for the outcome, which is the
    answer (``st.late_cancel`` set). A second cancel (a shutdown past its grace, a
    client gone) stops the waiting, not the write."""
    task = hold(fire_writes(st, staged, ctx, gate), _FIRING, awaited=False)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if gate is None:
            raise
        if not gate.sent:
            task.cancel()  # it has sent nothing: it stops, and the journal says so
            await asyncio.wait([task])  # the journal's ``not run``, before the answer
            raise
        _too_late(st)
        return await asyncio.shield(task)


async def _fire_gated(st: Statement, staged: list[StagedWrite], ctx: Statement,
                      gate: _Gate | None = None) -> tuple[int | None, list[list[dict]]]:
    """``_fire_shielded``, once a person approved them when a rule asks for it
    (``approval_flow``): their request then records what firing did."""
    approval = await approval_flow.hold(st, staged, ctx, journal_arguments, gate is not None)
    if approval is None:
        return await _fire_shielded(st, staged, ctx, gate)
    try:
        out = await _fire_shielded(st, staged, ctx, gate)
    except _Stopped as stop:
        await approval.ended(stop.txid, stop.error.message)
        raise
    await approval.ended(out[0], None)
    return out


async def fire_decided(st: Statement, staged: list[StagedWrite], ctx: Statement
                       ) -> tuple[int | None, str | None]:
    """An approved request's writes that no COMMIT waits for, fired now: the txid, and the
    error that stopped them (None: all fired)."""
    try:
        txid, _ = await _fire_shielded(st, staged, ctx)
    except _Stopped as stop:
        return stop.txid, stop.error.message
    return txid, None


async def _abandon(st: Statement, txid: int | None, seq: int) -> None:
    await st.services.journal.settle(txid, seq, "in doubt", error="canceled while firing")
    await st.services.journal.not_run(txid, seq + 1)


async def _fire_call(st: Statement, write: StagedWrite, call: Call,
                     ctx: Statement, gate: _Gate | None = None) -> Any:
    resource = st.services.resources[write.resource]
    args = call.bindings or {}
    given = CallArgs(args, call.where or {})
    ctx.touch(resource.name, call.verb, given.shown() if call.verb != "insert"
              else {"rows": len(call.rows)}, called=True)
    b = Bindings(given.values(), resource.name, call.where)
    inputs: tuple[Any, ...] = {
        "insert": (list(call.rows),), "update": (dict(call.changes or {}), b),
        "delete": (b,)}[call.verb]
    arguments = ([as_dict(r) for r in call.rows] if call.verb == "insert"
                 else {"changes": call.changes, **given.shown()} if call.verb == "update"
                 else given.shown())
    try:
        out = await resolve.invoke(st, resource, call.verb, inputs, arguments, ctx,
                                   statement=write.statement, key=call.key,
                                   sending=None if gate is None else gate.send)
    finally:
        st.services.invalidate(resource.name)
    try:
        st.overlay.remember(resource, call, out, write.id)
    except errors.SqlError as exc:  # fired all the same: its answer is only not laid over
        ctx.notice(unread(resource, call, exc))
    return out


async def commit(st: Statement, taken: list[StagedWrite]) -> Result:
    """Fire the writes a COMMIT took, in order, folds applied (``staged.pending``); the
    first failure stops the rest."""
    ctx = st.part("COMMIT", request=Request(), timed=False)
    staged = pending(taken)
    sent = {w.id for w in staged}
    folded = [Notice(f"folded #{w.id} into {', '.join(f'#{i}' for i in folded_into(w))}: "
                     f"{w.summary}") for w in taken if w.id not in sent]
    if not staged:
        return Result("COMMIT", notices=folded)
    try:
        _, returned = await _fire_gated(st, staged, ctx)
    except _Stopped as stop:
        one, exc = stop.write, stop.error
        detail = "; ".join(f"#{w.id} {w.summary}: {w.status}" for w in staged)
        if isinstance(exc, errors.TransactionResolutionUnknown):
            raise errors.TransactionResolutionUnknown(
                f"COMMIT stopped at staged write #{one.id} ({one.resource} {one.verb}), whose "
                f"outcome is unknown: {exc.message}", detail=detail,
                hint="Writes before it fired and stay done; the writes after it did not "
                "fire. The transaction is over. " + in_doubt_hint(st, stop.txid)) from None
        again = ""
        if stop.txid is not None:
            system = st.services.schemas.system
            again = (f" SELECT {system}.restage({stop.txid}) stages the writes that did not "
                     f"fire again, in a new transaction; SELECT * FROM {system}.journal "
                     f"WHERE txid = {stop.txid} shows each one.")
        raise errors.ExternalRoutineError(
            f"COMMIT failed at staged write #{one.id} ({one.resource} {one.verb}):"
            f" {exc.message}",
            detail=detail,
            hint="Writes before it fired and stay done; it and the writes after it did "
            "not. The transaction is over." + (again or " Re-run what is left in a new one."),
        ) from None
    system = st.services.schemas.system
    notices = [fired_notice(w, rows, system) for w, rows in zip(staged, returned, strict=True)]
    return Result("COMMIT", notices=notices + ctx.notices + folded, committed=staged,
                  touched=list(ctx.touched.values()))


async def fire_one(st: Statement, staged: StagedWrite, ctx: Statement
                   ) -> list[dict]:
    """A write outside BEGIN: journaled and fired now; the rows its tool gave back
    (RETURNING shows them). Its failure is the tool's own error."""
    try:
        _, returned = await _fire_gated(st, [staged], ctx, _Gate())
    except _Stopped as stop:
        if isinstance(stop.error, errors.TransactionResolutionUnknown):
            raise stop.error.replaced(hint=in_doubt_hint(st, stop.txid)) from None
        raise stop.error from None
    return returned[0]


def _too_late(st: Statement) -> None:
    """A cancel that came too late is taken back, so that no count of it is left on the
    task (a later timeout of the connection's would read it as its own)."""
    st.late_cancel = True
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


async def past_cancel(st: Statement, work: Coroutine[Any, Any, T]) -> T:
    """Work after a write outside BEGIN was sent (its RETURNING), which a cancel or a
    timeout no longer stops: it came too late (``st.late_cancel``). A second cancel
    (a client gone, a shutdown) stops the waiting."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        _too_late(st)
        return await asyncio.shield(task)
