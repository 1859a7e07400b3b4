"""Statements whose WITH holds an INSERT, UPDATE or DELETE: their writes, in order.

    WITH new AS (INSERT INTO issues (title) VALUES ('x') RETURNING id)
    INSERT INTO emails (subject) SELECT 'issue ' || id FROM new

Rules:
- Each data-modifying CTE is a part, then the statement itself is the last one.
  Parts run in the order of the WITH, each seeing the SELECT CTEs before it as
  they are and the writes before it as the rows their RETURNING gave (a CTE of
  those rows, ``Materialized``). Postgres runs them on one snapshot in no set
  order; a later part reads an earlier one's RETURNING, never its effect on a
  table, here as there. A part is a write even when nothing reads its RETURNING.
- Outside a transaction, each write fires before the next part is planned: the
  rows its tool returned (the ids it assigned) are what the next part reads. A
  part that fails stops the rest; the writes before it fired and stay done.
- Inside one, each part is staged. A part that reads, directly or through other
  CTEs, what an INSERT staged before it returns is *deferred*: it is planned now
  as the transaction's reads see it (values the tool assigns read as NULL), and
  planned again at COMMIT, once those writes have fired, from the rows their tools
  returned (``replan``). Its staged row, the preview and EXPLAIN say which writes
  it waits for.
- WITH RECURSIVE with a write in it is refused, as is a write a CTE's own WITH
  holds (Postgres allows data-modifying statements at the top level only).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pglast import ast, parser

from glove_scratchpad import errors
from glove_scratchpad.wire import Param

from ..sql.analysis import deparse, param_numbers, renumber_params
from ..sql.nodes import walk
from ..sql.parse import ParsedStatement
from . import resolve, sidecar, writes
from .context import Request
from .result import Notice, Result, StagedWrite
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Chain", "Link", "Part", "explain_parts", "fired", "replan", "run_parts", "split"]

_WRITES = (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)


@dataclass(frozen=True, slots=True)
class Part:
    """A write of the WITH (``name``), or the statement itself (``name`` None)."""

    name: str | None
    node: Any  # the statement of the part, its own WITH kept
    index: int  # how many of the WITH's CTEs come before it
    reads: frozenset[str]  # the earlier writes whose RETURNING it reads (by CTE name)

    @property
    def is_write(self) -> bool:
        return isinstance(self.node, _WRITES)


@dataclass(slots=True)
class Materialized:
    """A part's RETURNING rows, as Postgres encoded them (text), to read as a CTE."""

    names: tuple[str, ...]
    oids: tuple[int, ...]
    rows: list[tuple[bytes | None, ...]]

    def cte(self, name: str, first: int) -> tuple[str, list[Param]]:
        """``name(cols) AS (VALUES …)`` over parameters from ``$first``, typed as the
        RETURNING's columns; an empty one when it gave no rows."""
        cols = ", ".join(_ident(n) for n in self.names)
        width = len(self.names)
        if not self.rows:
            marks = ", ".join(f"${first + i}" for i in range(width))
            params = [Param(None, 0, oid) for oid in self.oids]
            return f"{_ident(name)}({cols}) AS (SELECT {marks} WHERE false)", params
        values, params = [], []
        for r, row in enumerate(self.rows):
            base = first + r * width
            values.append("(" + ", ".join(f"${base + i}" for i in range(width)) + ")")
            params += [Param(v, 0, oid) for v, oid in zip(row, self.oids, strict=True)]
        return f"{_ident(name)}({cols}) AS (VALUES {', '.join(values)})", params


@dataclass(eq=False)
class Chain:
    """One statement's parts, and what each write has returned so far."""

    sql: str
    ctes: tuple[Any, ...]  # the WITH's CommonTableExprs, as the client wrote them
    parts: list[Part]
    params: list[Param]  # the client's
    first_param: int  # the first $n free for the parts' materialized rows
    done: dict[str, Materialized] = field(default_factory=dict)
    staged: dict[str, int] = field(default_factory=dict)  # CTE name -> its write's id
    inserts: set[str] = field(default_factory=set)  # the parts that are INSERTs
    plans: dict[str | None, Any] = field(default_factory=dict)  # each part's, by name
    params_of: dict[str | None, list[Param]] = field(default_factory=dict)  # … and its $n


@dataclass(eq=False)
class Link:
    """A staged write's place in its chain."""

    chain: Chain
    part: Part
    deferred: bool  # planned again at COMMIT, from what the INSERTs it reads returned

    def after(self) -> list[int]:
        """The staged writes this one waits for (their ids)."""
        chain = self.chain
        return sorted(chain.staged[n] for n in _reached(chain, self.part) if n in chain.staged
                      and n in chain.inserts)

    async def replan(self, st: Statement, write: StagedWrite, ctx: Statement
                     ) -> None:
        await replan(st, write, ctx)

    async def fired(self, st: Statement, write: StagedWrite, rows: list[dict]) -> None:
        await fired(st, write, rows)


def split(node: Any, sql: str, params: Sequence[Param]) -> Chain | None:
    """The parts of a statement whose WITH holds a write; None when it holds none."""
    with_clause = getattr(node, "withClause", None)
    ctes = tuple(with_clause.ctes) if with_clause is not None else ()
    if not any(isinstance(c.ctequery, _WRITES) for c in ctes):
        return None
    if with_clause is not None and with_clause.recursive:
        raise errors.FeatureNotSupported(
            "a data-modifying statement in WITH RECURSIVE is not supported",
            hint="Put the recursive query in a WITH of its own, and the writes in plain WITH.")
    names = {c.ctename for c in ctes}
    parts = []
    for i, cte in enumerate(ctes):
        if isinstance(cte.ctequery, _WRITES):
            if _inner_writes(cte.ctequery):
                raise errors.FeatureNotSupported(
                    "WITH clause containing a data-modifying statement must be at the top "
                    "level", hint="Move the inner INSERT, UPDATE or DELETE to the "
                    "statement's own WITH.")
            parts.append(Part(cte.ctename, cte.ctequery, i,
                              frozenset(_read_names(cte.ctequery) & names)))
    main = copy.copy(node)
    main.withClause = None
    parts.append(Part(None, main, len(ctes), frozenset(_read_names(main) & names)))
    _check_snapshot(parts, ctes)
    used = param_numbers(node)
    chain = Chain(sql, ctes, parts, list(params), max(used, default=0) + 1)
    chain.inserts = {p.name for p in parts if isinstance(p.node, ast.InsertStmt) and p.name}
    return chain


async def run_parts(st: Statement, chain: Chain) -> Result:
    """Run (or stage) each part in order; the statement's own result, with every part's
    NOTICEs."""
    notices: list[Notice] = []
    touched = []
    staging = st.tx.state is TxState.OPEN
    result: Result | None = None
    fired: list[str] = []
    for part in chain.parts:
        deferred = staging and bool(_reached(chain, part) & chain.inserts)
        last = part.name is None
        formats = st.formats if last else ()
        try:
            result = await _part(st, chain, part, formats, deferred, staging)
        except errors.SqlError as exc:
            if not fired:
                raise
            done = ", ".join(fired)
            raise exc.replaced(detail="; ".join(filter(None, (
                exc.detail, f"the statement's writes before it fired and stay done: "
                f"{done}")))) from None
        notices += result.notices
        touched += result.touched
        if part.is_write and not staging and part.name is not None:
            fired.append(part.name)
    assert result is not None
    result.notices = list(dict.fromkeys(notices))
    result.touched = touched
    result.staged = list(st.tx.staged)
    return result


async def _part(st: Statement, chain: Chain, part: Part, formats: Sequence[int],
                deferred: bool, staging: bool) -> Result:
    sql, params = text_of(chain, part)
    node = parser.parse_sql(sql)[0].stmt
    stmt = ParsedStatement(sql, node)
    plan = st.plan(stmt)
    chain.plans[part.name] = plan
    _, fields = await sidecar.check(st, sql, params)
    # A part's own context; the request's stable calls are shared with the others.
    ctx = st.part(chain.sql, formats=tuple(formats))
    chain.params_of[part.name] = params
    try:
        if not part.is_write:
            return await resolve.read(st, plan, params, ctx, formats)
        link = Link(chain, part, deferred) if staging else None
        try:
            result = await writes.write(st, plan, params, ctx, link=link)
        except errors.SqlError as exc:
            # Planned as the transaction sees it, a deferred part may read NULL where the
            # tool will assign a value: COMMIT plans it again, and says then what fails.
            if not deferred or errors.sqlstate_class(exc.sqlstate) not in (
                    errors.CLASS_DATA_EXCEPTION, errors.CLASS_INTEGRITY_CONSTRAINT_VIOLATION):
                raise
            result = writes.stage_unplanned(st, plan, ctx, link, exc)
    finally:
        if ctx.spilled:
            st.services.kept.discard(ctx.spilled)
    if part.name is not None:
        chain.done[part.name] = _materialized(part, chain, result, fields)
        staged = st.tx.staged
        if link is not None and staged and staged[-1].link is link:
            chain.staged[part.name] = staged[-1].id
    return result


def text_of(chain: Chain, part: Part) -> tuple[str, list[Param]]:
    """A part's statement: the CTEs before it (the writes among them as their rows) and
    its own; and its parameters (those of the client's it uses, then those rows'),
    renumbered from $1."""
    defs: list[Any] = []
    params = list(chain.params)
    for cte in chain.ctes[:part.index]:
        if isinstance(cte.ctequery, _WRITES):
            first = chain.first_param + len(params) - len(chain.params)
            text, more = chain.done[cte.ctename].cte(cte.ctename, first)
            params += more
            made = parser.parse_sql(f"WITH {text} SELECT 1")[0].stmt
            assert isinstance(made, ast.SelectStmt) and made.withClause is not None
            defs.append((made.withClause.ctes or ())[0])
        else:
            defs.append(cte)
    node = copy.copy(part.node)
    own = getattr(node, "withClause", None)
    if defs or own is not None:
        node.withClause = ast.WithClause(ctes=(*defs, *(own.ctes if own else ())),
                                         recursive=False)
    node, used = renumber_params(node)
    # The client's $n past those it sent are missing values: the plan's check says so.
    by_number = {n: p for n, p in enumerate(params[:len(chain.params)], 1)}
    by_number.update({chain.first_param + i: p
                      for i, p in enumerate(params[len(chain.params):])})
    return deparse(node), [by_number[n] for n in used if n in by_number]


def _materialized(part: Part, chain: Chain, result: Result,
                  described: Sequence[Any] | None = None) -> Materialized:
    """What a write part's RETURNING gave, for the parts after it (``described``: its
    columns, for a part staged with no rows to show yet)."""
    fields = result.fields or tuple(described or ())
    cte = chain.ctes[part.index]
    names = tuple(c.sval for c in cte.aliascolnames or ()) or tuple(f.name for f in fields)
    return Materialized(names, tuple(f.type_oid for f in fields),
                        [tuple(r.values) for r in result.data_rows])


async def fired(st: Statement, write: StagedWrite, rows: list[dict]) -> None:
    """A chain's INSERT fired at COMMIT: what its RETURNING gives now, from the rows its
    tool returned (the values it assigned), for the parts that read it. An UPDATE's or
    DELETE's RETURNING was final when it was planned: the rows it affects."""
    link = write.link
    if not isinstance(link, Link) or link.part.name is None or write.verb != "insert":
        return
    chain, name = link.chain, link.part.name
    plan = chain.plans.get(name)
    if plan is None or plan.returning_span is None:
        return
    out = await writes.returning(st, plan, rows, chain.params_of[name], ())
    chain.done[name] = _materialized(link.part, chain, out)


async def replan(st: Statement, write: StagedWrite, ctx: Statement) -> None:
    """A deferred write, planned again at COMMIT from the rows the writes it reads
    returned: its calls are replaced (each keeps its idempotency key where one stands in
    the same place)."""
    link = write.link
    assert isinstance(link, Link)
    chain, part = link.chain, link.part
    sql, params = text_of(chain, part)
    stmt = ParsedStatement(sql, parser.parse_sql(sql)[0].stmt)
    plan = st.plan(stmt)
    chain.plans[part.name] = plan
    chain.params_of[part.name] = params
    await sidecar.check(st, sql, params)
    part_ctx = st.part(chain.sql, request=Request(), timed=False)
    planned = await writes.plan_write(st, plan, params, part_ctx)
    ctx.notices += part_ctx.notices
    keys = [c.key for c in write.calls]
    write.calls = [c if i >= len(keys) else dataclasses.replace(c, key=keys[i])
                   for i, c in enumerate(planned.calls)]
    write.link = Link(chain, part, deferred=False)  # planned for good
    if part.name is not None and plan.returning_span is not None:
        out = await writes.returning(st, plan, planned.rows, params, ())
        chain.done[part.name] = _materialized(part, chain, out)


async def explain_parts(st: Statement, chain: Chain) -> list[tuple[str, Any, Any]]:
    """What EXPLAIN says of a chain, calling nothing: each part in order, with what it
    reads and whether a transaction plans it at COMMIT; and its plan and statement.
    Each write part's RETURNING is described (its columns, no rows) for the next."""
    out = []
    for n, part in enumerate(chain.parts, 1):
        label = (f"{part.name} AS ({_verb(part.node)})" if part.name
                 else f"the statement ({_verb(part.node)})")
        line = f"Chain part {n}: {label}"
        if part.reads:
            line += f", reading the RETURNING of {', '.join(sorted(part.reads))}"
        after = sorted(_reached(chain, part) & chain.inserts)
        if after:
            line += (f"; in a transaction it is planned at COMMIT, once {', '.join(after)} "
                     "has fired (the ids its tool assigns)")
        sql, params = text_of(chain, part)
        node = parser.parse_sql(sql)[0].stmt
        plan = st.plan(ParsedStatement(sql, node))
        if part.name is not None:
            _, fields = await sidecar.check(st, sql, params)
            cte = chain.ctes[part.index]
            chain.done[part.name] = Materialized(
                tuple(c.sval for c in cte.aliascolnames or ())
                or tuple(f.name for f in fields or ()),
                tuple(f.type_oid for f in fields or ()), [])
        out.append((line, plan, node))
    return out


def _verb(node: Any) -> str:
    name = {ast.InsertStmt: "INSERT INTO", ast.UpdateStmt: "UPDATE",
            ast.DeleteStmt: "DELETE FROM"}.get(type(node))
    if name is None:
        return "SELECT"
    return f"{name} {node.relation.relname}"


def _check_snapshot(parts: list[Part], ctes: Sequence[Any]) -> None:
    """Refuse a part that reads a table an earlier part writes. Postgres runs every part
    on one snapshot, so it would read the rows from before the write; here the write
    has fired by then, and the tool's rows have changed."""
    written: dict[str, str] = {}  # table -> the CTE that writes it
    for part in parts:
        node = part.node
        reads = set(_read_names(node)) - {c.ctename for c in ctes[:part.index]}
        target = node.relation.relname if part.is_write and node.relation else None
        if isinstance(node, ast.InsertStmt):  # an INSERT never reads its target
            reads.discard(target)
        clash = sorted(reads & set(written))
        if clash:
            table = clash[0]
            where = f"{part.name}" if part.name else "the statement"
            raise errors.FeatureNotSupported(
                f'{where} reads "{table}", which {written[table]} writes earlier in the same '
                "statement",
                hint=f"Postgres would read {table} as it was before the write (one snapshot); "
                f"here the write fires first. Read what {written[table]} wrote from its "
                f"RETURNING (SELECT … FROM {written[table]}), or read {table} in a statement "
                "of its own.")
        if target is not None:
            written.setdefault(target, part.name or "the statement")


def _read_names(node: Any) -> set[str]:
    """The relation names a tree reads without a schema (CTE names among them)."""
    return {n.relname for n in walk(node) if isinstance(n, ast.RangeVar)
            and n.schemaname is None and n.relname}


def _inner_writes(node: Any) -> bool:
    return any(isinstance(n, ast.CommonTableExpr) and isinstance(n.ctequery, _WRITES)
               for n in walk(node))


def _reached(chain: Chain, part: Part) -> set[str]:
    """The writes a part reads, directly or through the SELECT CTEs it reads."""
    by_name = {c.ctename: c for c in chain.ctes[:part.index]}
    writes_ = {c.ctename for c in chain.ctes if isinstance(c.ctequery, _WRITES)}
    found: set[str] = set()
    todo = [n for n in _read_names(part.node) if n in by_name]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        cte = by_name[name]
        if not isinstance(cte.ctequery, _WRITES):
            earlier = {c.ctename for c in chain.ctes[:chain.ctes.index(cte)]}
            todo += [n for n in _read_names(cte.ctequery) if n in earlier]
    return found & writes_


def _ident(name: str) -> str:
    from glove_scratchpad.catalog import quote_ident

    return quote_ident(name)
