"""Resolving a statement's read references: bindings, calls, and exactly-once.

Rules:
- A missing required key fails before any resolver is called.
- Each distinct (resource, arguments) is called at most once per statement,
  whatever the query does with it: calls are shared through the statement's
  memo of futures. ``stable`` results are shared for one request, ``immutable``
  ones for the Database's life, ``volatile`` ones never.
- A call is made in the task of the statement that first needs it (its owner)
  and published on a future; if the owner is cancelled, another waiter makes it.
- Every call goes through the guard (concurrency, timeout, audit) and counts
  against the statement's call budget before it is made; so does each request to
  an upstream past a read's first (``CallContext.charge``: an API's next page).
- A value pushed down is converted to its column's type by pydantic when it is
  a plain literal or text parameter, else by Postgres (a sub-read).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import time
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from pglast import ast
from pydantic import ValidationError

from glove_scratchpad import errors
from glove_scratchpad.catalog import SYSTEM_VIEWS, Step, result_format
from glove_scratchpad.redaction import redact_error, redact_secrets
from glove_scratchpad.resources import Bindings, CallContext, Resource
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan, Reference, Value, deparse, renumber_params
from ..sql.engine_statements import value_select
from ..sql.parse import parse
from . import fns as fn_calls
from . import sidecar, suggest
from .bindings import COUNT, calls_of, converted, exact, integer_bounds, pushed
from .cache import Kept, lasting
from .call_rows import rows_of
from .context import CallArgs
from .messages import missing_key, missing_verb, resolver_failed
from .pull import pull
from .result import Notice, Result

if TYPE_CHECKING:
    from .statement import Statement

_FLIGHTS = itertools.count(1)  # the calls in flight, numbered (``Statement.in_flight``)

__all__ = ["check_keys", "evaluate_value", "functions", "gather", "invoke", "read",
           "resolve_all", "resolve_ref"]



async def read(st: Statement, plan: Plan, params: list[Param], ctx: Statement,
               formats: Sequence[int] = (), prelude: Step | None = None) -> Result:
    """A SELECT: resolve its references, then run it over their rows."""
    rows = await resolve_all(st, plan.reads, params, ctx)
    return await sidecar.run(st, plan, rows, params, ctx, formats=formats,
                             prelude=prelude, substitute=functions(st))


def functions(st: Statement) -> sidecar.Substitute | None:
    """What puts the results of a statement's ``fn.<name>(…)`` calls in their places,
    their arguments read as any read is (``read``); None when no function is served."""
    if not st.services.fns:
        return None

    async def substitute(plan: Plan, params: list[Param], args: list[Param],
                         ctx: Statement) -> list[tuple[int, int, str]]:
        return await fn_calls.substitute(st, plan, params, args, ctx, read)
    return substitute


def check_keys(refs: Iterable[Reference], verb: str = "select",
               others: Sequence[Reference] = ()) -> None:
    """Every reference can be called: it has the verb and a value for each key.
    ``others`` are the statement's other references, for a hint toward a join."""
    for ref in refs:
        resource = ref.resource
        if resource.resolver(verb) is None:
            raise missing_verb(resource, verb)
        bound = {p.column for p in ref.predicates}
        for key in resource.keys:
            if key not in bound:
                raise missing_key(resource, key, tuple(
                    text for column, text in ref.unbound if column == key),
                    feeder=_feeder_hint(ref, key, others))


def _feeder_hint(ref: Reference, key: str, others: Sequence[Reference]) -> str | None:
    """A join that could feed the key: another reference's column of the same name,
    else of the same type."""
    column = ref.resource.column(key)
    for same in (lambda c: c.name == key,
                 lambda c: column is not None and c.pg_type == column.pg_type):
        for other in others:
            if other is ref:
                continue
            for c in other.resource.columns:
                if same(c):
                    return (f"SELECT … FROM {other.label} JOIN {ref.label} ON "
                            f"{ref.alias}.{key} = {other.alias}.{c.name}")
    return None


async def resolve_all(st: Statement, refs: Sequence[Reference], params: list[Any],
                      ctx: Statement) -> dict[int, list[dict[str, Any]] | Kept]:
    """Each reference's rows, or the kept table that holds them (``cache.py``)."""
    check_keys(refs, others=refs)
    estimate = sum(math.prod(len(p.values) for p in ref.predicates) for ref in refs)
    st.services.guard.check_budget(ctx.planned + estimate)
    results = await gather(_resolve_read(st, ref, params, ctx) for ref in refs)
    return {ref.id: rows for ref, rows in zip(refs, results, strict=True)}


async def _resolve_read(st: Statement, ref: Reference, params: list[Any],
                        ctx: Statement) -> list[dict[str, Any]] | Kept:
    kept = st.services.kept
    database = st.view.database
    if (ref.schema == st.services.schemas.system or st.overlay.touches(ref.resource.name)
            or not kept.eligible(ref, database)):
        return await _spilled(st, ref, await resolve_ref(st, ref, params, ctx), ctx)
    calls = await bindings(st, ref, params, ctx)
    if len(calls) != 1:  # several calls (or none): their rows travel with the statement
        return await _spilled(st, ref, await resolve_ref(st, ref, params, ctx, calls),
                              ctx)
    ctx.planned += 1
    st.services.guard.check_budget(ctx.planned)
    out = await kept.read(ref, calls[0], ctx,
                          lambda: select(st, ref, calls[0], ctx, into_table=True),
                          database=database, user=st.user)
    if isinstance(out, Kept) or kept.keeps(database, len(out)):
        # The table holds the rows now: the memory need not. Or it could not be made: the
        # rows are the tool's own dicts, not a snapshot, and the next statement calls again.
        st.services.immutable.pop((ref.resource.name, calls[0].identity_as(
            ref.resource.credential_of(st.user))), None)
    if isinstance(out, Kept):
        return out
    return await _spilled(st, ref, rows_of(st, ref, calls, [out], ctx), ctx)


async def _spilled(st: Statement, ref: Reference, rows: list[dict[str, Any]],
                   ctx: Statement) -> list[dict[str, Any]] | Kept:
    """A reference's rows, or, when there are many, the table they were copied into for
    this statement alone (``KeptCalls.spill``); the statement's end drops it."""
    if len(rows) < st.services.limits.spill_min_rows or ref.schema == st.services.schemas.system:
        return rows
    table = await st.services.kept.spill(ref.resource, rows, database=st.view.database,
                                         user=st.user)
    if table is None:
        return rows
    ctx.spilled.append(table)
    return table


async def resolve_ref(st: Statement, ref: Reference, params: list[Any],
                      ctx: Statement, calls: list[CallArgs] | None = None
                      ) -> list[dict[str, Any]]:
    if calls is None:
        calls = await bindings(st, ref, params, ctx)
    ctx.planned += len(calls)
    st.services.guard.check_budget(ctx.planned)
    # The broadest calls first: a narrower one of the same keys may reuse their rows.
    order = sorted(range(len(calls)), key=lambda i: sum(map(len, calls[i].where.values())))
    done = await gather(select(st, ref, calls[i], ctx) for i in order)
    results = [rows for _, rows in sorted(zip(order, done, strict=True))]
    rows = rows_of(st, ref, calls, results, ctx)
    if not rows and ref.schema == st.services.schemas.system and ref.resource.name == (
            "resources"):  # WHERE name = '…' of a name no table has: a search
        named = [v for c in calls for op, v in c.where.get("name", ()) if op == "="]
        if named and isinstance(named[0], str):
            ctx.notices.append(await suggest.no_such_table(st, named[0]))
    return rows


async def bindings(st: Statement, ref: Reference, params: list[Any],
                   ctx: Statement) -> list[CallArgs]:
    """Every call a reference makes: one per combination of its keys' values, each with
    the reference's filter conditions and limit (as the fast path worked them out for
    these parameters, if it did)."""
    if st.worked_out is not None:
        known = st.worked_out.get(id(ref))
        if known is not None and known[0] is ref:
            return known[1]
    values = {id(value): await evaluate_value(st, value, column, params, ctx)
              for value, column in pushed(ref)}
    return calls_of(ref, values)


async def evaluate_value(st: Statement, value: Value, column: Any, params: list[Any],
                         ctx: Statement) -> list[Any]:
    """A pushed-down value, converted to the column's type (a list: IN gives several)."""
    now = converted(value, column, params)
    if now is not None:
        return now
    node, used = renumber_params(value.node)
    expr = deparse(node)
    sub_params = [params[n - 1] for n in used if n <= len(params)]
    # A number compared with an integer column is read as it is, never rounded by a cast
    # (bindings.exact); text and a parameter of no type take the column's, as they would
    # in the client's statement.
    bounds = integer_bounds(column.pg_type) if column is not COUNT else None
    if bounds is not None and _typed_as_written(value, sub_params):
        pg_type = "numeric"
    else:
        pg_type, bounds = column.pg_type, None
    sql = value_select(expr, pg_type, is_set=value.is_set, has_subquery=value.has_subquery)
    stmt = parse(sql)[0]
    # Binary where we can: text would follow the client's DateStyle, extra_float_digits…
    try:
        result = await read(st, st.plan(stmt), sub_params, ctx,
                            (result_format(pg_type),))
    except errors.SqlError as exc:
        if exc.position is None:
            raise
        # A position in our own SELECT means nothing to the client: point at the value.
        loc = getattr(value.node, "location", -1)
        raise exc.replaced(
            position=loc + 1 if isinstance(loc, int) and loc >= 0 else None) from None
    if not value.is_set and len(result.rows) > 1:
        raise errors.CardinalityViolation(
            "more than one row returned by a subquery used as an expression",
            hint=f"Use {column.name} IN (SELECT …) to call once per value.",
        )
    out = []
    for (v,) in result.rows:
        if bounds is not None:
            out.append(None if v is None else exact(v, bounds))
            continue
        try:
            out.append(column.convert(v) if v is not None else None)
        except ValidationError as exc:  # valid for Postgres, not for the tool (a Literal)
            about = f": {column.description}" if column.description else ""
            raise errors.InvalidParameterValue(
                f'invalid value for column "{column.name}": {v!r}',
                detail=exc.errors()[0]["msg"],
                hint=f'Use a value column "{column.name}" accepts{about}.',
                column_name=column.name,
            ) from None
    return out


def _typed_as_written(value: Value, params: Sequence[Param]) -> bool:
    """Whether a value has a type of its own, which Postgres compares with the column's:
    not quoted text, nor a parameter whose type the client left open (those take the
    column's type, as in the client's statement)."""
    node = value.node
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.String):
        return False
    if isinstance(node, ast.ParamRef):
        return bool(params) and params[0].oid != 0
    return True


async def select(st: Statement, ref: Reference, call: CallArgs, ctx: Statement,
                 *, into_table: bool = False) -> list[dict[str, Any]]:
    """One call's rows: made once, by the first statement that needs them (the call's
    owner, in its own task); other references and statements await its future. A call
    whose rows another call of the statement covers reuses them. ``into_table``: rows
    enough to be kept go into a kept table (``KeptCalls.read``), not into memory."""
    resource: Resource = ref.resource
    credential = resource.credential_of(st.user)
    key = (resource.name, call.identity_as(credential))
    immutable = st.services.immutable
    shown, touched = call.shown(), call.touch_key(resource.name, "select")
    started = time.perf_counter()
    while True:
        fut = ctx.memo.get(key) or _covering(ctx, resource.name, call, credential)
        owner = False
        if fut is None:
            cache = {"immutable": immutable, "stable": ctx.request.stable}.get(
                resource.volatility)
            if lasting(resource):  # a stable ttl call lasts across requests too
                cache = immutable
            if resource.name in SYSTEM_VIEWS:
                cache = None
            fut = (st.services.lasting_call(key) if cache is immutable
                   else cache.get(key) if cache is not None else None)
            if fut is None or (fut.done() and (fut.cancelled() or fut.exception())):
                fut = asyncio.get_running_loop().create_future()
                owner = True
                if cache is not None:
                    cache[key] = fut
                    if cache is immutable:
                        st.services.kept.started(key, resource.ttl)
                    fut.add_done_callback(functools.partial(_forget_failure, cache, key))
            ctx.touch(resource.name, "select", shown, called=owner, key=touched)
            ctx.memo[key] = fut
            ctx.call_args[key] = call
        if owner:
            # Rows that no cache holds are read by this statement alone, at once.
            rows = await _own(fut, _call_select(st, ref, call, ctx, memory=cache is not None,
                                                into_table=into_table))
            break
        try:
            rows = await asyncio.shield(fut)  # a waiter's cancel is not the call's
            break
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not fut.cancelled() or task is None or task.cancelling():
                raise  # this statement was cancelled
            # The owner was cancelled, not this statement: make the call here.
            if ctx.memo.get(key) is fut:
                del ctx.memo[key]
    done = ctx.touch(resource.name, "select", shown, called=False, key=touched)
    done.rows, done.ms = len(rows), max(done.ms, (time.perf_counter() - started) * 1000)
    return rows


def _covering(ctx: Statement, resource: str, call: CallArgs,
              credential: str | None) -> Any:
    """A call of this statement whose rows hold every row this one asks for."""
    if not call.where:
        return None  # only a call with the same identity covers it: the memo has it
    for (name, _), other in ctx.call_args.items():
        if name == resource and other is not call and other.covers(call):
            return ctx.memo.get((name, other.identity_as(credential)))
    return None


async def invoke(st: Statement, resource: Resource, verb: str, args: tuple[Any, ...],
                 arguments: Any, ctx: Statement, *, statement: str | None = None,
                 key: str | None = None, wanted: int | None = None,
                 sending: Callable[[], None] | None = None) -> Any:
    """One resolver call, under the guard's threads, concurrency, timeout, rate, retries
    (reads only) and audit. ``statement`` is the one that staged a write (COMMIT fires
    it); ``key`` its idempotency key; ``wanted`` the most rows a read's answer gives: they
    are pulled within the call, which gives their list. A resolver with a ``ctx``
    parameter gets them. ``sending`` is told just before the request leaves."""
    fn = resource.resolver(verb)
    assert fn is not None
    sql = ctx.sql if statement is None else statement
    context = (CallContext(st.user, st.session_id, sql, idempotency_key=key,
                           rows_wanted=wanted,
                           charge=_charger(st, ctx) if verb == "select" else None,
                           warn=_warner(ctx), notice=_warner(ctx, "NOTICE"))
               if resource.takes_context(verb) else None)
    flight = next(_FLIGHTS)
    st.calls += 1
    if resource.name not in st.called:
        st.called.append(resource.name)
    st.in_flight[flight] = (resource.name, verb, time.time())
    try:
        return await st.services.guard.call(
            resource.name, verb, fn, args, arguments=arguments, user=st.user,
            session=st.session_id, statement=sql, inline=resource.on_loop(verb),
            retries=resource.retries if verb == "select" else 0, rate=resource.rate,
            deadline=ctx.started + st.timeout if ctx.timed else None, context=context,
            rows=None if wanted is None else (lambda out, read: pull(out, wanted, read),
                                              getattr(resource, "inline", False)),
            sending=sending)
    except errors.SqlError:
        raise
    except Exception as exc:
        raise resolver_failed(resource, verb, exc) from exc
    finally:
        st.in_flight.pop(flight, None)


def _warner(ctx: Statement, severity: str = "WARNING") -> Callable[..., None]:
    """What a resolver tells the client a WARNING (or a NOTICE) with
    (``CallContext.warn``, ``CallContext.notice``)."""
    code = errors.WARNING if severity == "WARNING" else errors.SUCCESSFUL_COMPLETION

    def warn(message: str, hint: str | None = None) -> None:
        # It may quote what the tool was answered: every configured secret redacted.
        ctx.notice(Notice(redact_secrets(message), severity, code, hint=hint))

    return warn


def _charger(st: Statement, ctx: Statement) -> Callable[[], None]:
    """What a read's upstream requests count with: the first is the call (planned
    already), every other one more against the statement's call budget. A write's
    are not counted: its requests (one per row) are known when it is staged, and a
    COMMIT cut off halfway through its rows would leave them half sent."""
    made = 0

    def charge() -> None:
        nonlocal made
        made += 1
        if made > 1:
            ctx.planned += 1
            st.services.guard.check_budget(ctx.planned, made="upstream requests")

    return charge


async def _call_select(st: Statement, ref: Reference, call: CallArgs,
                       ctx: Statement, *, memory: bool, into_table: bool) -> list[dict]:
    """A call made: its rows, checked. Rows that a cache keeps in ``memory`` are a
    snapshot (copies the tool cannot change later), unless they go ``into_table``."""
    resource: Resource = ref.resource
    b = Bindings(call.values(), resource.name, call.where, call.limit)
    cap = st.services.limits.call_row_cap
    # With only keys in its WHERE, a LIMIT is the statement's too: pull no more.
    wanted = min(call.limit, cap + 1) if call.limit is not None and ref.keys_only else cap + 1
    raw = await invoke(st, resource, "select", (b,), call.shown(), ctx, wanted=wanted)
    if len(raw) > cap:
        del raw[cap:]
        ctx.notices.append(Notice(
            f'resource "{resource.name}" gave more than {cap} rows in one call; the rest '
            "were cut", hint="Narrow the call with its keys and filters (\\d+ "
            f"{resource.name}), or add LIMIT."))
    snapshot = memory and not (into_table and st.services.kept.keeps(st.view.database,
                                                                      len(raw)))
    try:
        return resource.validate_rows(raw, call.keys, snapshot=snapshot)
    except errors.SqlError as exc:  # it quotes the tool's values: as the guard redacts them
        clean = redact_error(exc)
        if clean is exc:
            raise
        raise clean from None


async def gather(coros: Iterable[Any]) -> list[Any]:
    """Run concurrently; the first failure cancels the rest and is raised as itself."""
    coros = list(coros)
    if len(coros) == 1:
        return [await coros[0]]
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(c) for c in coros]
    except BaseExceptionGroup as group:
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    return [t.result() for t in tasks]


async def _own(fut: asyncio.Future[Any], call: Any) -> Any:
    """Run a shared call in its owner's task and publish its outcome on ``fut``.

    Inline, not a task of its own: a synchronous resolver then costs no trip
    through the event loop. If the owner is cancelled, so is the call, and
    another waiter makes it again."""
    try:
        out = await call
    except asyncio.CancelledError:
        fut.cancel()
        raise
    except BaseException as exc:
        fut.set_exception(exc)
        fut.exception()  # retrieved: the owner raises it, waiters may not exist
        raise
    fut.set_result(out)
    return out


def _forget_failure(cache: MutableMapping[Any, asyncio.Future[Any]], key: Any,
                    fut: asyncio.Future[Any]) -> None:
    if (fut.cancelled() or fut.exception() is not None) and cache.get(key) is fut:
        del cache[key]
