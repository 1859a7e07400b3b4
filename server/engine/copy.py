"""COPY both ways: a read's rows out in Postgres's own bytes, a client's rows in as an INSERT.

Rules:
- ``COPY (query) TO STDOUT`` is the SELECT it names: gated, checked, planned and
  budgeted as that SELECT is, its calls made once. The rewritten query's rows go
  into a table of the transaction's own in the sidecar (a COPY takes no parameters,
  and the rows are parameters), and the sidecar's own COPY of that table, with the
  client's options, streams to the client (``catalog.copy_out``): the bytes are
  Postgres's. Columns keep the names the query gave them, twice the same included.
- ``COPY resource FROM STDIN`` is one INSERT with every row. The sidecar parses the
  client's data into a table of its own with the resource's column types
  (``catalog.copy_in``): formats, escapes and errors with their line numbers are
  Postgres's. Its rows come back as JSON and become an ``INSERT … SELECT`` over
  them, planned, staged or fired and journaled as any INSERT is (``writes.write``).
  A row that does not fit fails the COPY whole: nothing is staged or sent.
- Whether writes are allowed is known before the client sends a byte (25006).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glove_scratchpad import errors
from glove_scratchpad.catalog import (
    CopyChannel,
    Step,
    copy_in,
    copy_out,
    encode_param,
    populate_sql,
    quote_ident,
)
from glove_scratchpad.wire import Param

from ..sql.copy import CopySpec, copy_spec
from ..sql.parse import ParsedStatement, parse
from ..sql.rewrite import rewrite
from . import resolve, sidecar, writes
from .result import Result

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["run"]

_TABLE = "_gs_copy"


async def run(st: Statement, stmt: ParsedStatement, params: list[Param]) -> Result:
    """A COPY the gate let through, its data to or from the client's connection."""
    spec = copy_spec(stmt.node)
    channel: CopyChannel | None = st.request.copy
    if channel is None:
        raise errors.FeatureNotSupported(
            "COPY needs a client connection: its data travels in the wire protocol",
            hint="Send it from a Postgres client (psql's \\copy, psycopg's cursor.copy).")
    if spec.is_from:
        return await _copy_from(st, spec, channel)
    return await _copy_to(st, spec, params, channel)


async def _copy_to(st: Statement, spec: CopySpec, params: list[Param],
                   channel: CopyChannel) -> Result:
    select = parse(spec.select_sql)[0]
    plan = st.plan(select)
    _, fields = await sidecar.check(st, select.sql, params)
    ctx = st.part(select.sql)
    try:
        rows = await resolve.resolve_all(st, plan.reads, params, ctx)
        param_of, args, tables = sidecar.materialize(plan, rows, params)
        substitute = resolve.functions(st)
        calls = await substitute(plan, params, args, ctx) if substitute is not None else ()
        rw = rewrite(plan, param_of, populate=populate_sql, replace=calls,
                     schemas=st.services.schemas, tables=tables)
        named = list(fields or ())
        numbered = ", ".join(f"c{i}" for i in range(len(named)))
        made = Step(f"CREATE TEMPORARY TABLE {_TABLE} ({numbered}) ON COMMIT DROP AS {rw.sql}",
                    args, rows=False, own=True)
        shown = ", ".join(f"c{i} AS {quote_ident(f.name)}" for i, f in enumerate(named))
        out = Step(f"COPY (SELECT {shown} FROM pg_temp.{_TABLE}) TO STDOUT {spec.options}",
                   rows=False, own=True)
        steps, parsed_under = sidecar.with_settings(st, [made, out])
        async with st.view.pool.acquire() as conn:
            results = await copy_out(conn, steps, parsed_under, channel)
    finally:
        if ctx.spilled:
            st.services.kept.discard(ctx.spilled)
    return Result(results[-1].tag, notices=ctx.notices, touched=list(ctx.touched.values()))


async def _copy_from(st: Statement, spec: CopySpec, channel: CopyChannel) -> Result:
    resource = st.lookup(spec.schema, spec.relation)
    assert resource is not None  # the gate let only a resource through
    types = {c.name: c.pg_type for c in resource.columns}
    names = spec.columns or tuple(types)
    for name in names:
        if name not in types:
            raise errors.UndefinedColumn(
                f'column "{name}" of relation "{resource.name}" does not exist',
                hint="Columns: " + ", ".join(types) + ".")
    if len(set(names)) != len(names):
        raise errors.DuplicateColumn("a column is named more than once in the COPY",
                                     hint="Name each column once.")
    cols = ", ".join(map(quote_ident, names))
    typed = ", ".join(f"{quote_ident(n)} {types[n]}" for n in names)
    target = (f"{quote_ident(spec.schema)}." if spec.schema else "") + quote_ident(spec.relation)
    insert = parse(f"INSERT INTO {target} ({cols}) SELECT {cols} "
                   f"FROM json_to_recordset($1::json) AS _gs_copied({typed})")[0]
    plan = st.plan(insert)
    writes.check_allowed(st, plan)  # 25006 before the client sends a byte
    # Named as the resource, so that Postgres's CONTEXT names it with the line.
    table = f"pg_temp.{quote_ident(resource.name)}"
    before = sidecar.with_settings(st, [Step(f"CREATE TEMPORARY TABLE {table} ({typed}) "
                                             "ON COMMIT DROP", own=True)])[0]
    loaded = Step(f"COPY {table} ({cols}) FROM STDIN {spec.options}", own=True)
    back = Step(f"SELECT json_agg(_gs_row)::text FROM {table} AS _gs_row", own=True)
    async with st.view.pool.acquire() as conn:
        tag, rows = await copy_in(conn, before, loaded, back, channel)
    json = rows[0].values[0] if rows else None
    ctx = st.part(insert.sql)
    result = await writes.write(st, plan, [encode_param(json.decode() if json else "[]")],
                                ctx)
    result.command_tag = tag
    return result
