"""Writes: INSERT, UPDATE and DELETE planned into calls, staged or fired.

Rules:
- Writes are refused unless the server and the transaction allow them.
- A write is planned completely before any write tool is called: its rows
  (INSERT), or the rows it affects (UPDATE/DELETE), are computed by Postgres
  over the resources' rows, so casts, defaults and errors are Postgres's own.
- UPDATE/DELETE of a resource with a primary key and a select verb reads the
  rows first and calls the tool once per affected row; a row the select does
  not return is not affected. The command tag counts the affected rows, and a
  predicate no row matches is ``UPDATE 0``/``DELETE 0``.
- Otherwise the WHERE must bind the keys (and primary key) with ``=``/``IN``;
  each combination of values is one call.
- Inside BEGIN the calls are staged, with a NOTICE, and later reads of the
  transaction see them (``overlay``); outside they fire at once, journaled
  (``commit``). One INSERT statement is one ``insert`` call with all its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors, metrics
from glove_scratchpad.catalog import (
    INSERT_SCHEMA,
    Step,
    encode_param,
    populate_sql,
    result_format,
    rows_params,
    shell_ddl,
)
from glove_scratchpad.resources import Resource
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan, Reference, deparse, renumber_params
from ..sql.engine_statements import RETURNING_ALL, fill_table, returning_alias, returning_over
from ..sql.parse import parse
from . import commit, resolve, sidecar
from .messages import missing_verb, set_column
from .overlay import as_dict
from .result import Call, Notice, Result, StagedWrite
from .staged import folded_into, staged_rows
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Planned", "plan_write", "returning", "verb_of", "write"]

_VERBS = {ast.InsertStmt: "insert", ast.UpdateStmt: "update", ast.DeleteStmt: "delete"}


def verb_of(node: Any) -> str:
    return _VERBS[type(node)]


def check_allowed(st: Statement, plan: Plan) -> Resource:
    """The target resource, once the write is known to be allowed here."""
    node = plan.node
    verb = verb_of(node)
    if not st.writes:
        raise errors.ReadOnlySqlTransaction(
            f"cannot execute {verb.upper()} in a read-only transaction",
            hint="This server does not allow writes: start it with --writes "
            "(Database.create(writes=True)) to INSERT, UPDATE and DELETE.",
        )
    tx = st.tx
    if tx.read_only or (tx.state is TxState.IDLE and st.settings.get(
            "default_transaction_read_only") == "on"):
        raise errors.ReadOnlySqlTransaction(
            f"cannot execute {verb.upper()} in a read-only transaction",
            hint="The transaction is READ ONLY (BEGIN READ ONLY, SET TRANSACTION READ ONLY "
            "or default_transaction_read_only): end it, then write in a READ WRITE one.",
        )
    target = plan.target
    if target is None:
        rel = node.relation
        raise errors.InsufficientPrivilege(
            f'cannot {verb} relation "{rel.relname}": only resources can be written',
            hint="SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() lists the resources.",
        )
    resource: Resource = target.resource
    if resource.resolver(verb) is None or target.schema == st.services.schemas.system:
        raise missing_verb(resource, verb)
    with_clause = getattr(node, "withClause", None)
    for cte in with_clause.ctes if with_clause else ():
        if not isinstance(cte.ctequery, ast.SelectStmt):
            raise errors.FeatureNotSupported(
                "a data-modifying statement inside WITH is not supported",
                hint="Make the INSERT, UPDATE or DELETE the statement itself; WITH may "
                "hold SELECTs.",
            )
    return resource


@dataclass(slots=True)
class Planned:
    """A write planned, nothing staged or fired: its calls, and the rows it writes or
    affects (what RETURNING reads)."""

    resource: Resource
    verb: str
    calls: list[Call]
    rows: list[dict]
    tag: str


async def plan_write(st: Statement, plan: Plan, params: list[Param],
                     ctx: Statement) -> Planned:
    """The calls an INSERT, UPDATE or DELETE will make, once it is known to be allowed."""
    resource = check_allowed(st, plan)
    verb = verb_of(plan.node)
    if verb == "insert":
        calls, rows = await _plan_insert(st, plan, params, ctx)
        return Planned(resource, verb, calls, rows, f"INSERT 0 {len(rows)}")
    calls, affected = await _plan_change(st, plan, verb, params, ctx)
    tag = f"{verb.upper()} {len(affected) if affected is not None else len(calls)}"
    return Planned(resource, verb, calls, affected or [], tag)


async def write(st: Statement, plan: Plan, params: list[Param],
                ctx: Statement, link: Any = None) -> Result:
    """Plan a write, then stage it (in a transaction) or fire it. ``link``: its place in
    a statement whose WITH holds writes (``chains.Link``), staged even with no call
    when COMMIT plans it again."""
    planned = await plan_write(st, plan, params, ctx)
    resource, verb, calls, rows = planned.resource, planned.verb, planned.calls, planned.rows
    staged = StagedWrite(st.next_write_id(), resource.name, verb, plan.sql, calls,
                         link=link)
    if st.tx.state is TxState.OPEN:
        if calls or (link is not None and link.deferred):
            st.tx.staged.append(staged)
            metrics.write(resource.name, "staged")
            ctx.notices.append(_staged_notice(staged, resource))
    elif calls:
        returned = await commit.fire_one(st, staged, ctx)
        if returned:
            rows = returned
    result = Result(planned.tag, notices=ctx.notices, touched=list(ctx.touched.values()),
                    staged=list(st.tx.staged))
    if plan.returning_span is not None:
        shown = returning(st, plan, rows, params, ctx.formats)
        # Once a write outside BEGIN fired, its RETURNING is part of its outcome.
        ret = await (shown if st.tx.state is TxState.OPEN or not calls
                     else commit.past_cancel(st, shown))
        result.columns, result.fields, result.data_rows = ret.columns, ret.fields, ret.data_rows
    return result


def stage_unplanned(st: Statement, plan: Plan, ctx: Statement, link: Any,
                    why: errors.SqlError) -> Result:
    """Stage a chain's write that only COMMIT can plan: as the transaction reads it now,
    a value its input's tool assigns is NULL, and its rows would not be valid."""
    resource = check_allowed(st, plan)
    verb = verb_of(plan.node)
    staged = StagedWrite(st.next_write_id(), resource.name, verb, plan.sql, [],
                         link=link)
    st.tx.staged.append(staged)
    metrics.write(resource.name, "staged")
    after = ", ".join(f"#{i}" for i in link.after())
    ctx.notices.append(Notice(
        f"staged #{staged.id}: {verb} of {resource.name}, planned at COMMIT from the rows "
        f"{after} returns once fired; as staged now it has no rows to show: {why.message}",
        hint="COMMIT plans it once the writes it reads have fired, and fails there if its "
        "rows are still not valid. SELECT * FROM scratchpad.staged shows what is staged."))
    return Result(f"{verb.upper()}{' 0' if verb == 'insert' else ''} 0", notices=ctx.notices,
                  touched=list(ctx.touched.values()), staged=list(st.tx.staged))


def _staged_notice(staged: StagedWrite, resource: Resource) -> Notice:
    calls = staged.calls
    sent = [c for c in calls if c.staged_row is None]
    parts = ["; ".join(c.describe(resource.name) for c in sent)
             + " will be called at COMMIT"] if sent else []
    folds = len(calls) - len(sent)
    if folds:
        into = ", ".join(f"#{i}" for i in folded_into(staged))
        parts.append(f"{'it changes ' if sent else 'changes '}{folds} "
                     f"row{'s' if folds != 1 else ''} that {into} stages, sent so "
                     "changed with that INSERT (the tool assigns their ids)")
    link = staged.link
    if link is not None and link.deferred:
        after = ", ".join(f"#{i}" for i in link.after())
        parts = [f"{staged.verb} of {resource.name}, planned at COMMIT from the rows "
                 f"{after} returns once fired" + (f" (as staged now: {'; '.join(parts)})"
                                                  if parts else "")]
    return Notice(
        f"staged #{staged.id}: {'; '.join(parts)}",
        hint="SELECT * FROM scratchpad.staged shows what is staged; ROLLBACK "
        "discards it. Reads in this transaction see it; values the tool assigns "
        "(ids) are known after COMMIT.")


async def _plan_insert(st: Statement, plan: Plan, params: list[Any], ctx: Statement
                       ) -> tuple[list[Call], list[dict]]:
    resource: Resource = plan.target.resource  # type: ignore[union-attr]
    rows = await resolve.resolve_all(st, plan.reads, params, ctx)
    twin = Step(shell_ddl(resource, INSERT_SCHEMA)[0], rows=False, own=True)
    result = await sidecar.run(st, plan, rows, params, ctx, returning=RETURNING_ALL,
                               prelude=twin, formats=_read_formats(resource),
                               substitute=resolve.functions(st))
    names = result.column_names
    given = {r.name for r in plan.node.cols} if plan.node.cols else set(names)
    inserted = [{k: v for k, v in zip(names, row, strict=True) if k in given or v is not None}
                for row in result.rows]
    models = resource.validate_insert_rows(inserted)
    calls = [Call("insert", rows=tuple(models))] if models else []
    return calls, [as_dict(m) for m in models]


async def _plan_change(st: Statement, plan: Plan, verb: str, params: list[Any],
                       ctx: Statement) -> tuple[list[Call], list[dict] | None]:
    """The calls of an UPDATE/DELETE, and the affected rows when they can be known."""
    target: Reference = plan.target  # type: ignore[assignment]
    resource: Resource = target.resource
    if resource.primary_key and resource.select:
        return await _change_read_rows(st, plan, verb, params, ctx)
    bound = {p.column for p in target.predicates}
    identity = set(resource.keys) | set(resource.primary_key)
    if not (plan.where_fully_bound and target.predicates and identity <= bound
            and all(v is not None for v in plan.set_values)):
        cols = ", ".join(sorted(identity)) or "the columns the tool needs"
        raise errors.FeatureNotSupported(
            f'{verb.upper()} on resource "{resource.name}" needs its WHERE to bind {cols}'
            " with = or IN only",
            hint=f"Write {verb.upper()} … WHERE "
            + " AND ".join(f"{c} = …" for c in sorted(identity) or ["key"])
            + "; other predicates need a resource that declares primary_key and select.",
        )
    resolve.check_keys(plan.reads)
    await resolve.resolve_all(st, plan.reads, params, ctx)
    targets = await resolve.bindings(st, target, params, ctx)
    if verb == "delete":
        return [Call("delete", bindings=c.keys, where=c.where or None) for c in targets], None
    changes: dict[str, Any] = {}
    for name, value in zip(plan.set_columns, plan.set_values, strict=True):
        assert value is not None  # checked above: every SET value is known
        column = set_column(resource, name)
        changes[name] = (await resolve.evaluate_value(st, value, column, params, ctx))[0]
    return [Call("update", changes=changes, bindings=c.keys, where=c.where or None)
            for c in targets], None


async def _change_read_rows(st: Statement, plan: Plan, verb: str, params: list[Any],
                            ctx: Statement) -> tuple[list[Call], list[dict]]:
    """Read the target's rows, let Postgres run the statement over them, and make one
    call per row it changed: its primary key and keys, and the filters' conditions the
    WHERE gave. A row that a staged INSERT of this transaction adds is changed in that
    INSERT instead (a fold, ``staged.py``): the tool has not made it yet."""
    target: Reference = plan.target  # type: ignore[assignment]
    resource: Resource = target.resource
    pk = resource.primary_key
    for name in plan.set_columns:
        set_column(resource, name)
    resolve.check_keys([target, *plan.reads])
    targets = await resolve.bindings(st, target, params, ctx)
    target_rows = await resolve.resolve_ref(st, target, params, ctx, targets)
    rows = await resolve.resolve_all(st, plan.reads, params, ctx)
    # A staged INSERT's row whose key the tool assigns (NULL until COMMIT) cannot be
    # named to an update or delete tool: it is changed where it is staged.
    unique = {key: r for r in target_rows
              if None not in (key := tuple(r[k] for k in pk))}
    identity = (*pk, *(k for k in resource.keys if k not in pk))
    pairs: list[tuple[dict, dict]] = []  # each row as it was, and as the statement left it
    if any(c in identity for c in plan.set_columns):
        # The tool is told each row by its old key (UPDATE t SET name = 'new' WHERE name =
        # 'old'): one row at a time, so that the new values are paired with the old key.
        for old in unique.values():
            hits = await _run_change(st, plan, resource, [old], rows, params, ctx)
            pairs += [(old, hits[0])] if hits else []
    else:
        changed = await _run_change(st, plan, resource, list(unique.values()), rows,
                                    params, ctx)
        pairs = [(r, r) for r in changed]
    changed = [new for _, new in pairs]
    _validate_changes(resource, plan, changed)
    calls = []
    for old, new in pairs:
        bindings = {k: old[k] for k in identity}
        where = next((c.where for c in targets if all(old.get(k) == v for k, v in
                                                        c.keys.items())), None) or None
        calls.append(Call("update", changes={c: new[c] for c in plan.set_columns},
                          bindings=bindings, where=where) if verb == "update" else
                     Call("delete", bindings=bindings, where=where))
    for where_staged, row in _unsent_rows(st, resource):
        # One row at a time: whether a statement changes a row, and how, depends on
        # that row alone, so each staged row's outcome is known as its own.
        hits = await _run_change(st, plan, resource, [row], rows, params, ctx,
                                 twin=True)
        if not hits:
            continue
        hit = hits[0]
        if verb == "update":
            _validate_changes(resource, plan, [hit])
            new = resource.validate_insert_rows([hit])[0]
            calls.append(Call("update", rows=(new,), staged_row=where_staged))
        else:
            calls.append(Call("delete", staged_row=where_staged))
        changed.append(hit)
    return calls, changed


def _unsent_rows(st: Statement, resource: Resource) -> list[tuple[tuple[int, int], dict]]:
    """The rows this transaction's INSERTs stage whose primary key the tool assigns (NULL
    until COMMIT), each with where it is staged."""
    if st.tx.state is not TxState.OPEN:
        return []
    pk = resource.primary_key
    found = []
    for where, row in staged_rows(st.tx.staged, resource.name):
        [values] = resource.validate_rows([as_dict(row)])
        if any(values.get(k) is None for k in pk):
            found.append((where, values))
    return found


async def _run_change(st: Statement, plan: Plan, resource: Resource,
                      target_rows: list[dict], rows: dict[int, Any], params: list[Any],
                      ctx: Statement, *, twin: bool = False) -> list[dict]:
    """The statement run by Postgres over the target's rows: the rows it changed, as
    they are after it (an UPDATE) or were (a DELETE). ``twin``: over the target's
    unconstrained twin, which takes a staged row whose key is still NULL."""
    target: Reference = plan.target  # type: ignore[assignment]
    if not target_rows:
        return []  # no row to change: Postgres would change none
    served = st.services.schemas.served
    fill = fill_table(resource.name, INSERT_SCHEMA if twin else served,
                      populate_sql(resource, 1, served))
    prelude = [Step(fill, [*map(encode_param, rows_params(resource, target_rows))],
                    rows=False)]
    if twin:
        prelude.insert(0, Step(shell_ddl(resource, INSERT_SCHEMA)[0], rows=False, own=True))
    # The target's own columns, whatever else FROM/USING brings into the statement.
    result = await sidecar.run(st, plan, rows, params, ctx,
                               returning=returning_alias(target.alias),
                               prelude=prelude, formats=_read_formats(resource), twin=twin,
                               substitute=resolve.functions(st))
    return result.dicts()


def _validate_changes(resource: Resource, plan: Plan, changed: list[dict]) -> None:
    """An UPDATE's new values are checked against the schema, as an INSERT's are, before
    anything is staged or fired: a Literal column refuses a value it does not list."""
    if plan.set_columns and changed:
        resource.validate_insert_rows(changed)


async def returning(st: Statement, plan: Plan, rows: list[dict], params: list[Param],
                    formats: Sequence[int]) -> Result:
    """A write's RETURNING over the rows it wrote (as its tool returned them) or affected."""
    target: Reference = plan.target  # type: ignore[assignment]
    resource: Resource = target.resource
    n = plan.max_param + 1
    sql = returning_over(plan, populate_sql(resource, n, st.services.schemas.served,
                                            alias=target.alias))
    node, used = renumber_params(parse(sql)[0].node)
    all_args = [*params, *map(encode_param, rows_params(resource, rows))]
    sql, args = deparse(node), [all_args[i - 1] for i in used]
    out = await sidecar.pipeline(st, [Step(sql, args, formats)])
    return sidecar.result_of(st, "", out)


def _read_formats(resource: Resource) -> tuple[int, ...]:
    """Result formats for reading a resource's rows into Python (RETURNING *): binary
    where Postgres' text would depend on the client's settings."""
    return tuple(result_format(c.pg_type) for c in resource.columns)
