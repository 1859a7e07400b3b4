"""The text rewrite that points a statement at its resolved rows. No I/O.

Each read reference's relation name is replaced by a per-statement CTE over its
rows (``_gs_r<N>``), keeping the name the statement used as the alias; the CTEs
are added to the statement's own WITH (or a new one). Each CTE is referenced once
and, unless the statement may read it many times (``Plan.rescans``: a subquery,
LATERAL, WITH RECURSIVE), not MATERIALIZED: Postgres inlines it, and its rows are
never copied into a tuplestore of their own. The statement is otherwise left as
the client wrote it, so Postgres sees the same SQL, and an error
position in the rewritten text maps back to the client's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glove_scratchpad.names import DEFAULT_SCHEMAS, INSERT_SCHEMA, Schemas, qualified, quote_ident

from .analysis import Plan

__all__ = ["Populate", "Rewritten", "cte_name", "rewrite"]

# The FROM item that reads a reference's rows from its parameters: (the resource, its
# first parameter's number, the schema of its shell table) -> SQL. The catalog owns
# how rows travel (``catalog.populate_sql``).
Populate = Callable[[Any, int, str], str]


def cte_name(ref_id: int) -> str:
    return f"_gs_r{ref_id}"


@dataclass(frozen=True, slots=True)
class Rewritten:
    sql: str
    # (original start, original end, length of the replacement), in text order.
    edits: tuple[tuple[int, int, int], ...]

    def original_position(self, position: int) -> int:
        """Map a 1-based position in ``sql`` back to the client's text."""
        pos = position - 1
        shift = 0
        for start, end, new_len in self.edits:
            new_start = start + shift
            if pos < new_start:
                break
            if pos < new_start + new_len:
                return start + 1
            shift += new_len - (end - start)
        return pos - shift + 1


def _apply(sql: str, edits: list[tuple[int, int, str]]) -> Rewritten:
    edits.sort(key=lambda e: (e[0], e[1]))
    out, last, spans = [], 0, []
    for start, end, text in edits:
        out.append(sql[last:start])
        out.append(text)
        spans.append((start, end, len(text)))
        last = end
    out.append(sql[last:])
    return Rewritten("".join(out), tuple(spans))


def rewrite(
    plan: Plan,
    params: Mapping[int, int],
    *,
    populate: Populate,
    returning: str | None = None,
    replace: Sequence[tuple[int, int, str]] = (),
    schemas: Schemas = DEFAULT_SCHEMAS,
    tables: Mapping[int, str] | None = None,
    twin: bool = False,
) -> Rewritten:
    """Point each read reference at its rows, parameters from ``params[ref.id]`` on,
    read by ``populate``'s FROM item.

    The write target, if any, becomes its shell table; ``returning`` replaces the
    statement's RETURNING clause (or is appended when it has none). ``replace``
    are more edits (fn calls' results); a reference inside one is left to it.
    ``schemas`` are the server name's (``catalog.schema_names``). ``tables`` are the
    kept tables (qualified) that references read in place of parameters: a table's
    CTE is never MATERIALIZED, since reading it again costs nothing, and inlined it
    lets Postgres use the table's index. ``twin``: the target of an UPDATE or DELETE is
    its unconstrained twin, as an INSERT's always is (rows whose key is NULL fit it).
    """
    tables = tables or {}
    edits: list[tuple[int, int, str]] = list(replace)
    ctes = []
    # Read once, a CTE is inlined: its rows are made by the scan of the parameters
    # and never copied. Where it may be read many times, it is made once.
    materialized = "MATERIALIZED " if plan.rescans else ""
    for ref in plan.reads:
        name = cte_name(ref.id)
        start, end = ref.span
        text = name if ref.has_alias else f"{name} AS {quote_ident(ref.name)}"
        if not any(s <= start and end <= e for s, e, _ in replace):
            edits.append((start, end, text))
        table = tables.get(ref.id)
        if table is not None:
            ctes.append(f"{name} AS (SELECT * FROM {table})")
            continue
        schema = schemas.system if ref.schema == schemas.system else schemas.served
        ctes.append(f"{name} AS {materialized}(SELECT * FROM "
                    f"{populate(ref.resource, params[ref.id], schema)})")
    target = plan.target
    if target is not None:
        # An INSERT computes its rows against the unconstrained twin table.
        schema = INSERT_SCHEMA if plan.is_insert or twin else schemas.served
        text = qualified(target.name, schema)
        if not target.has_alias and plan.is_insert:
            text += f" AS {quote_ident(target.name)}"
        edits.append((target.span[0], target.span[1], text))
    if ctes:
        defs = ", ".join(ctes)
        if plan.with_insert_at is not None:
            edits.append((plan.with_insert_at, plan.with_insert_at, f" {defs},"))
        else:
            edits.append((plan.query_at, plan.query_at, f"WITH {defs} "))
    if returning is not None:
        if plan.returning_span is not None:
            start, end = plan.returning_span
            edits.append((start, end, returning))
        else:
            end = len(plan.sql.rstrip().rstrip(";").rstrip())
            edits.append((end, end, " " + returning))
    return _apply(plan.sql, edits)
