"""The fast path of a repeated read whose every call is cached.

A SELECT whose references are all lasting resources (immutable, or stable with a
ttl), each making one call whose arguments are constants or the statement's own
parameters (no IN list on a key, no sub-query, no join feeding them), can be
answered from its calls' caches alone: a kept call's table (``cache.py``), or the
rows kept in memory. Once such a text has run the full path, ``compile`` records
its plan. When it comes again, ``reads`` converts its arguments in Python
(``bindings.bindings_now``) and finds each call's cached answer, and the statement
goes from the gate straight to ``sidecar.run``: no check on the sidecar, no planning,
no resolver, one round trip.

Rules:
- Whatever the full path would do differently takes the full path: a call not
  cached (never made, gone with its ttl, a write or a refresh), an argument that
  Postgres must convert (a binary parameter, a value the column refuses: the full
  path words the error), a NULL, a call with no rows (its NOTICE), a call with rows
  enough to be kept or spilled, a write of the session that touches the resource,
  a failed transaction.
- What the full path does with a cached call, the fast path does too: the call's
  identity with the user's credentials (``Resource.credential_of``), the call
  budget, the call's touch (what the agent shows), a kept call's hit, the
  most-recently-used order of the memory cache. ``sidecar.run`` does the rest.
- Never compiled: a write, a statement that calls ``set_config`` (the full
  path runs it in a transaction it rolls back), one that calls functions, one that
  reads a system view or a resource whose calls last one request at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from glove_scratchpad import metrics
from glove_scratchpad.wire import Param

from .bindings import bindings_now, pushed
from .cache import Kept, lasting
from .context import WorkedOut
from .prepared import CachedCall, Compiled
from .transaction import TxState
from .whoami import asks_who

if TYPE_CHECKING:
    from ..sql.analysis import Plan, Reference
    from .statement import Statement

__all__ = ["compile", "reads"]


def compile(st: Statement, plan: Plan) -> None:
    """Record a read that just ran the full path, when its calls can all be cached."""
    prepared = st.record(plan.sql)
    if prepared.compile_tried:
        return
    made = None
    if (plan.target is None and plan.reads and not plan.sets_config
            and not asks_who(plan)
            and all(_cacheable(ref, st.services.schemas.system) for ref in plan.reads)):
        fixed = [_fixed(ref) for ref in plan.reads]
        if all(f is not False for f in fixed):
            made = Compiled(plan, tuple(f or None for f in fixed))
    prepared.compiled, prepared.compile_tried = made, True


def reads(st: Statement, compiled: Compiled, params: Sequence[Param],
          worked_out: WorkedOut | None = None
          ) -> tuple[Statement, dict[int, list[dict] | Kept]] | None:
    """The statement's context and each reference's cached answer (a kept table, or
    rows), their calls counted as the full path counts them; None when the full path
    must run (and nothing was counted). ``worked_out`` gets the calls it worked out
    from the parameters, by reference: the full path's own (``Statement.worked_out``).
    The context is a part of ``st`` (``Statement.part``)."""
    if st.tx.state is TxState.FAILED or len(params) != compiled.plan.max_param:
        return None
    found: list[tuple[Reference, CachedCall, list[dict] | Kept]] = []
    for ref, call in zip(compiled.plan.reads, compiled.fixed, strict=True):
        if st.overlay.touches(ref.resource.name):
            return None
        if call is None:
            calls = bindings_now(ref, params)
            if calls is not None and worked_out is not None:
                worked_out[id(ref)] = (ref, calls)
            if calls is None or len(calls) != 1:
                return None
            call = CachedCall.of(ref, calls[0])
        answer = _cached(st, ref, call)
        if answer is None:
            return None
        found.append((ref, call, answer))
    st.services.guard.check_budget(len(found))
    # A fast read is one statement, its text the compiled plan's: its own scope holds its
    # calls (a part would copy it, on the path where every microsecond is the product's).
    ctx = st
    ctx.planned = len(found)
    rows: dict[int, list[dict] | Kept] = {}
    for ref, call, answer in found:
        touched = ctx.touch(ref.resource.name, "select", call.shown, called=False,
                            key=call.touched)
        if isinstance(answer, Kept):
            answer.hits += 1
            metrics.kept("hit")
            touched.rows = answer.rows
        else:
            touched.rows = len(answer)
        rows[ref.id] = answer
    return ctx, rows


def _cached(st: Statement, ref: Reference, call: CachedCall) -> list[dict] | Kept | None:
    """A call's answer from its caches: its kept table, or its rows in memory; those of
    the calls made with the user's credentials, when the resource's calls depend on them
    (a compiled read is shared by the users of a view)."""
    db = st.services
    key = call.key
    credential = ref.resource.credential_of(st.user)
    if credential is not None:
        key = (key[0], call.args.identity_as(credential))
    kept = db.kept.find((st.view.database, *key))
    if kept is not None:
        return kept
    fut = db.lasting_call(key)
    if fut is None or not fut.done():
        return None  # not made, over its ttl, failed, or still being made: the full path
    rows: list[dict] = fut.result()
    if not rows or len(rows) >= min(db.limits.cache_min_rows, db.limits.spill_min_rows):
        return None  # a NOTICE to give, or rows to keep or spill: the full path's
    return rows


def _fixed(ref: Reference) -> CachedCall | Literal[False] | None:
    """A reference's call when the text fixes it; None when it depends on parameters;
    False when it cannot be made in Python (it is never compiled)."""
    if any(v.param is not None for v, _ in pushed(ref)):
        return None
    calls = bindings_now(ref, ())
    if calls is None or len(calls) != 1:
        return False
    return CachedCall.of(ref, calls[0])


def _cacheable(ref: Reference, system: str) -> bool:
    """Whether a reference's one call may be answered from a cache: a lasting resource,
    and arguments that are constants or parameters, one value per key."""
    if ref.schema == system or not lasting(ref.resource):
        return False
    if any(len(p.values) != 1 for p in ref.predicates):
        return False  # an IN list on a key: several calls
    values: list[Any] = [v for p in ref.predicates for v in p.values]
    values += [v for c in ref.conditions for v in c.values]
    values += [v for v in (ref.limit, ref.offset) if v is not None]
    return all(not v.is_set and (v.is_const or v.param is not None) for v in values)


