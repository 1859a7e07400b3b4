"""Running a statement on the sidecar: its resolved rows in, Postgres's answer out.

Rules:
- A statement's arguments are its own parameters, then each read reference's
  rows (``catalog.rows_params``); the rewrite points each reference at them. A
  reference whose call is kept (``cache.py``) sends no rows: it reads its table.
- Everything runs on a pooled connection, in one pipelined round trip, inside a
  transaction that is rolled back, or one that is read-only: nothing a statement
  does there outlives it.
  The session's settings travel with it as ``set_config(…, true)``. What the
  statement's own ``set_config`` calls set is read back in that transaction and
  kept by the session, as SET or SET LOCAL would (``session_settings``).
- An error position in the rewritten text is mapped back to the client's text;
  a position in a step of our own means nothing to the client and is dropped.
- A lone read that cannot change a setting runs in the sidecar's implicit,
  read-only transaction (no BEGIN, no ROLLBACK: nothing is left to undo).
  The client's own such read is compiled for the fast path (``fast.py``) when
  all its calls may be answered from their caches.
- ``check`` asks the sidecar to parse the client's own statement against the
  shell tables before any tool is called, so an unknown column, table or
  function is the first error, in Postgres's words and with its did-you-mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from glove_scratchpad import errors
from glove_scratchpad.catalog import (
    SidecarConnection,
    Step,
    StepResult,
    encode_param,
    populate_sql,
    rows_params,
)
from glove_scratchpad.stream import Stream
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan
from ..sql.nodes import calls_any
from ..sql.parse import parse
from ..sql.rewrite import Rewritten, rewrite
from ..sql.sidecar_text import read_settings, set_settings
from . import fast
from . import temp as temp_tables
from .cache import Kept
from .result import Result, ResultColumn
from .result_limits import row_cut, within
from .session_settings import SHOWN_ONLY, changes, configured, reported_values
from .transaction import TxState
from .whoami import who_edits

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Substitute", "check", "materialize", "pipeline", "result_of", "run",
           "start", "unguarded", "with_settings"]



class Substitute(Protocol):
    """Evaluates a statement's function calls, their results appended to ``args``: the
    text edits that put each in its call's place."""

    async def __call__(self, plan: Plan, params: list[Param], args: list[Param],
                       ctx: Statement) -> list[tuple[int, int, str]]: ...


# Settings that change no statement's parse, left out of the sidecar's Describe.
_NOT_PARSING = frozenset(("application_name", "statement_timeout"))


def materialize(plan: Plan, rows: dict[int, list[dict] | Kept], params: list[Param]
                ) -> tuple[dict[int, int], list[Param], dict[int, str]]:
    """The statement's arguments: its own parameters, then each reference's rows;
    ``param_of`` is the first parameter of each reference, ``tables`` the kept table
    that a reference reads in place of rows (none are sent for it)."""
    if len(params) != plan.max_param:
        raise errors.ProtocolViolation(
            f"bind message supplies {len(params)} parameters, but prepared statement "
            f"requires {plan.max_param}",
            hint="Pass exactly one value per $n in the statement.",
        )
    args = list(params)
    param_of = {}
    tables = {}
    for ref in plan.reads:
        got = rows[ref.id]
        if isinstance(got, Kept):
            tables[ref.id] = got.table
            continue
        param_of[ref.id] = len(args) + 1
        args.extend(map(encode_param, rows_params(ref.resource, got)))
    return param_of, args, tables


async def check(st: Statement, sql: str, params: Sequence[Param]) -> Any:
    """Parse and describe the client's statement on the sidecar, calling nothing.

    The shell tables have the resources' columns, so Postgres itself finds an
    unknown column, relation or function, before any tool runs. The answer is
    kept in the text's one record (``Statement.record``), shared by Describe and
    Execute, per (parameter types, settings): resources do not change while served.
    It is kept under the types the sidecar inferred too, as they are the types the
    same text gets when given them: a Describe with none (``()``) and the Execute
    after it, whose parameters have the inferred types, make one round trip.
    """
    oids = tuple(p.oid for p in params)
    # A literal is typed as it is parsed, under the session's settings (DateStyle reads
    # '13/01/2024'; search_path finds the tables).
    settings = tuple(sorted((n, v) for n, v in st.settings.items()
                            if n not in SHOWN_ONLY and n not in _NOT_PARSING))
    known = st.record(sql).described
    # A session's temporary tables change under the same text: its own answer, never kept.
    pinned = st.temp is not None and st.temp.pinned
    described = None if pinned else known.get((oids, settings))
    if described is None:
        setter = _setter(settings) if settings else None
        async with temp_tables.lease(st) as conn:
            described = await conn.describe(sql, oids, setter)
        if not pinned:
            known.put((oids, settings), described)
            if described[0] != oids:
                known.put((described[0], settings), described)
    return described


@dataclass(frozen=True, slots=True)
class _Exchange:
    """One statement's exchange with the sidecar, built once whichever way it runs (a
    task awaits it, ``run``; or the socket's callbacks answer it, ``start``)."""

    steps: list[Step]  # the session's settings first (``_with_settings``), when any
    main: Step  # the client's statement, rewritten
    rewritten: Rewritten
    parsed_under: tuple[Any, ...]  # the settings the steps are parsed under
    transaction: str  # "write", "read" (rolled back) or "implicit" (``Pipeline``'s)
    configs: list[tuple[str, bool]]  # its set_config calls, read back by the last step
    temp: bool  # a temporary table's DDL or write: committed on the pinned connection
    own: bool  # the client's own read, alone: its rows may go to the client as they come


def _exchange(st: Statement, plan: Plan, rows: dict[int, list[dict] | Kept],
              materialized: tuple[dict[int, int], list[Param], dict[int, str]],
              ctx: Statement, *, returning: str | None = None,
              prelude: Step | Sequence[Step] | None = None, formats: Sequence[int] = (),
              twin: bool = False, calls: Sequence[tuple[int, int, str]] = ()) -> _Exchange:
    """The steps that run a planned statement over its references' rows (``materialize``'s
    arguments, and the text's edits: its function ``calls``, and the identity functions
    answered for the user, ``who_edits``, which a compiled read has none of)."""
    param_of, args, tables = materialized
    params = args[:plan.max_param]
    spilled = any(isinstance(r, Kept) and not r.lasting for r in rows.values())
    rw = _rewritten(st, plan, param_of, tables, returning=returning, twin=twin,
                    calls=calls, again=not (calls or spilled))
    # A temporary table's DDL and writes commit at once, on the session's pinned connection.
    # Its command tag is a DDL one: the gate judged it (``temp_tables``).
    temp = temp_tables.writes_temp(plan.node, st.temp)
    prefix = st.explain[0] if st.explain is not None and st.explain[1] is plan else ""
    main = Step(prefix + rw.sql, args, () if prefix else formats, own=temp)
    before = [] if prelude is None else [prelude] if isinstance(prelude, Step) else list(prelude)
    steps = [*before, main]
    configs = configured(plan.node, params) if plan.sets_config else []
    if configs:  # what its set_config calls set, read back in the same transaction
        steps.append(Step(read_settings(len(configs)),
                          [encode_param(name) for name, _ in configs]))
    if temp:
        steps += [temp_tables.size_check(st.services.limits.temp_table_limit_mb),
                  temp_tables.COMMIT]
    write = plan.target is not None or temp
    # A lone read that cannot change a setting leaves nothing a ROLLBACK would undo.
    implicit = not write and not before and not plan.sets_config
    steps, parsed_under = _with_settings(st, steps)
    return _Exchange(steps, main, rw, parsed_under,
                     "write" if write else "implicit" if implicit else "read", configs, temp,
                     implicit and not calls and ctx.sql == plan.sql and not prefix)


async def run(st: Statement, plan: Plan, rows: dict[int, list[dict] | Kept],
              params: list[Param],
              ctx: Statement, *, returning: str | None = None,
              prelude: Step | Sequence[Step] | None = None, formats: Sequence[int] = (),
              twin: bool = False, substitute: Substitute | None = None) -> Result:
    """Run a planned statement over its references' rows, after the ``prelude`` steps.
    ``twin``: an UPDATE or DELETE changes the target's unconstrained twin (``pg_temp``,
    which a prelude makes and fills) instead of its shell table. ``substitute`` puts the
    results of its function calls in their places (``fns.substitute``)."""
    materialized = materialize(plan, rows, params)
    calls = (await substitute(plan, params, materialized[1], ctx)
             if substitute is not None else ())
    who = who_edits(st, plan)
    if who:  # current_user and its kin answer the connecting role, not the agent role
        calls = (*calls, *who)
    ex = _exchange(st, plan, rows, materialized, ctx, returning=returning, prelude=prelude,
                   formats=formats, twin=twin, calls=calls)
    if ex.temp:
        await st.temp.pin(st.view.pool, st.user)
    own = ex.own
    try:
        results = await _pipeline(st, ex, stream=(lambda: _stream(st)) if own else None)
    except errors.ConfigurationLimitExceeded:
        if ex.temp:  # the size check before COMMIT failed: rolled back
            raise temp_tables.over_limit(st.services.limits.temp_table_limit_mb) from None
        raise
    out = results[ex.steps.index(ex.main)]
    if own and not (st.temp and st.temp.pinned):
        fast.compile(st, plan)
    result = result_of(st, out.tag, out, ctx) if ex.temp else _result(st, out, ctx)
    if ex.temp:
        temp_tables.made(st, plan.node)
        said = temp_tables.notice(st)
        if said:
            result.notices.append(said)
    if ex.configs:
        result.parameters = _remember_configured(
            st, ex.configs, results[-1 - 2 * ex.temp].rows[0].values)
    return result


def start(st: Statement, conn: SidecarConnection, plan: Plan,
          rows: dict[int, list[dict] | Kept], params: list[Param], ctx: Statement,
          done: Callable[[Result | StepResult | errors.SqlError], None]) -> Callable[[], None]:
    """``run`` of a compiled read (``fast.py``: its own read, alone), the same exchange,
    on ``conn`` (the pool's ``take_now``, for its user), answered from the sidecar
    socket's callbacks: ``done`` gets its result or error, once, and the connection
    goes back to the pool. A result with nothing to cut at the row limit and no notice
    is the sidecar's reply itself (a ``StepResult``: no ``Result`` is made); any other
    is a ``Result``, for ``shown`` and ``bounded``. What it returns abandons the run (a
    cancel, a timeout, a client gone): the connection is closed after a cancel, and
    ``done`` is not called."""
    ex = _exchange(st, plan, rows, materialize(plan, rows, params), ctx, formats=st.formats)
    pool, owner = st.view.pool, st.user

    def replied(outcome: list[StepResult] | errors.SqlError) -> None:
        pool.give_back(conn, owner)
        if isinstance(outcome, errors.SqlError):
            done(_mapped(outcome, ex))
            return
        out = outcome[-1]
        stream = out.stream
        if (ctx.notices or not within(out.rows, st.services.limits, st.policy.row_limit)
                or (stream is not None and (stream.cut or stream.over))):
            done(_result(st, out, ctx))  # to be shaped
        else:
            done(out)  # its rows and tag as the sidecar sent them: nothing to cut or add

    def abandon() -> None:
        conn.abandon()
        pool.give_back(conn, owner, cut=True)

    conn.start(ex.steps, ex.parsed_under, replied, lambda: _stream(st))
    return abandon


def _stream(st: Statement) -> Stream:
    """A client's own read's rows: relayed as they come, if its socket takes them now;
    else kept, but not past ``max_result_bytes``."""
    sink = st.sink
    limits = st.services.limits
    if sink is None or not sink.accepts():
        return Stream(None, None, limits.max_result_bytes)
    return Stream(sink, row_cut(limits, st.policy.row_limit), limits.max_result_bytes)


def _result(st: Statement, out: StepResult, ctx: Statement) -> Result:
    """A read's Result: of its rows kept, or of those relayed as they came."""
    stream = out.stream
    if stream is not None and (stream.started or stream.over):
        result = result_of(st, f"SELECT {stream.sent}", out, ctx)
        result.relayed = stream
        return result
    return result_of(st, f"SELECT {len(out.rows)}", out, ctx)


def _rewritten(st: Statement, plan: Plan, param_of: dict[int, int], tables: dict[int, str],
               *, returning: str | None = None, twin: bool = False,
               calls: Sequence[tuple[int, int, str]] = (), again: bool = True) -> Rewritten:
    """The text the sidecar runs for a plan; ``again``: one that always rewrites the same
    (the same plan, RETURNING and kept tables), kept with the text's record."""
    if not again:  # a text of its own, never again
        return rewrite(plan, param_of, populate=populate_sql, returning=returning,
                       replace=calls, schemas=st.services.schemas, tables=tables, twin=twin)
    rewrites = st.record(plan.sql).rewrites
    key: tuple[Any, ...] = (returning, tuple(tables.items()), twin)
    found = rewrites.get(key)
    if found is None:
        found = rewrites.put(key, rewrite(plan, param_of, populate=populate_sql,
                                          returning=returning, schemas=st.services.schemas,
                                          tables=tables, twin=twin))
    return found


def _mapped(exc: errors.SqlError, ex: _Exchange) -> errors.SqlError:
    """An error with its position in the client's text: kept when it points into the
    exchange's main step (its rewritten text), else dropped (a step of our own)."""
    if exc.position is None:
        return exc
    in_main = getattr(exc, "step", None) == ex.steps.index(ex.main)
    position = ex.rewritten.original_position(exc.position) if in_main else None
    return exc.replaced(position=position)


def _remember_configured(st: Statement, configs: list[tuple[str, bool]],
                         values: Sequence[bytes | None]) -> dict[str, str]:
    """Remember what a statement's set_config calls set, as SET (LOCAL) would; the
    values a client sees in ParameterStatus."""
    settings = st.session_settings
    before = dict(settings.now)
    for (name, local), value in zip(configs, values, strict=True):
        if value is not None and not (local and st.tx.state is TxState.IDLE):
            settings.set(name, value.decode(), local=local)
    return reported_values(changes(before, settings.now), settings.now)[0]


async def pipeline(st: Statement, steps: list[Step], *, transaction: str = "read"
                   ) -> StepResult:
    """Run the server's own steps on a pooled sidecar connection, with the session's
    settings; the last step's result is returned."""
    steps, parsed_under = _with_settings(st, steps)
    async with temp_tables.lease(st) as conn:
        try:
            results = await conn.pipeline(steps, transaction=transaction,
                                          parsed_under=parsed_under)
        except errors.SqlError as exc:
            if exc.position is None:
                raise
            raise exc.replaced(position=None) from None  # a position in our own text
    return results[-1]


async def _pipeline(st: Statement, ex: _Exchange,
                    stream: Callable[[], Stream] | None = None) -> list[StepResult]:
    """An exchange's steps on a pooled sidecar connection, each with its result. An
    error's position in its main step is mapped back to the client's text."""
    async with temp_tables.lease(st) as conn:
        try:
            return await conn.pipeline(ex.steps, transaction=ex.transaction,
                                       parsed_under=ex.parsed_under, stream=stream)
        except errors.SqlError as exc:
            if exc.position is None:
                raise
            raise _mapped(exc, ex) from None


def _setter(settings: Sequence[tuple[str, str]]) -> Step:
    """The step that sets ``settings`` for the transaction it runs in."""
    return Step(set_settings(len(settings)),
                [encode_param(x) for pair in settings for x in pair], rows=False)


def _with_settings(st: Statement, steps: list[Step]) -> tuple[list[Step], tuple[Any, ...]]:
    """The steps after one that applies the session's settings, for this transaction;
    and those settings, which the steps are parsed under (none: the steps as they are)."""
    if not st.settings and not st.policy.statement_timeout:
        return steps, ()
    # application_name changes no result; it is sent only to a statement that reads it.
    names = [n for n in st.settings if n not in SHOWN_ONLY and (
        n != "application_name" or any("application_name" in step.sql for step in steps))]
    if st.policy.statement_timeout and "statement_timeout" not in names:
        names.append("statement_timeout")  # the role's limit, as current_setting says it
    if not names:
        return steps, ()
    settings = dict(st.settings)
    if "statement_timeout" in names:
        # The session enforces the client's value under the server's cap; the sidecar gets
        # the effective one, never the raw 0 or "1h" that would lift its backstop.
        settings["statement_timeout"] = f"{max(1, int(st.timeout * 1000))}ms"
    pairs = tuple((n, settings[n]) for n in names)
    return [_setter(pairs), *steps], pairs


with_settings = _with_settings  # a COPY's steps (``copy.py``) are set up as any statement's


def result_of(st: Statement, tag: str, out: StepResult,
              ctx: Statement | None = None) -> Result:
    key = out.description or out.fields
    columns = st.view.columns.get(key)
    if columns is None:
        names = st.services.type_names
        columns = tuple(ResultColumn(f.name, f.type_oid, names.get(f.type_oid, str(f.type_oid)))
                        for f in out.fields)
        st.view.columns[key] = columns
    return Result(
        command_tag=tag,
        columns=list(columns),
        fields=out.fields,
        data_rows=out.rows,
        notices=ctx.notices if ctx else [],
        touched=list(ctx.touched.values()) if ctx else [],
    )


async def unguarded(st: Statement, sql: str) -> Result:
    """Test-only: layer 1 switched off. The SQL goes to the sidecar as it is, as a
    statement that slipped past the gate would: as the agent role, in the transaction a
    read of its kind gets (``run``): the implicit read-only one, or, when it calls
    set_config, a read-only one that is rolled back. Layer 2 alone must stop it."""
    try:
        rolled_back = calls_any(parse(sql)[0].node, frozenset(("set_config",)))
    except (errors.SqlError, IndexError):
        rolled_back = True
    out = await pipeline(st, [Step(sql)], transaction="read" if rolled_back else "implicit")
    return result_of(st, "", out)
