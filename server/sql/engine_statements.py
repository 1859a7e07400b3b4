"""The statements the engine sends the sidecar of its own making, written here: a pushed
value read into its column's type, a write's target rows laid into their table, and a
write's RETURNING read over the rows it wrote. Pure: SQL text in, SQL text out.

Rules:
- Each takes its parts as SQL text already made (an expression as the client wrote it,
  deparsed; the catalog's ``populate_sql`` of some rows) and names (quoted here).
- A value's statement aliases its column ``_gs_v`` in a subquery ``_gs_s``: names no
  client's text can reach, since the text is the client's expression alone.
"""

from __future__ import annotations

from glove_scratchpad.names import qualified, quote_ident

from .plan import Plan

__all__ = ["RETURNING_ALL", "fill_table", "returning_alias", "returning_over", "value_select"]

RETURNING_ALL = "RETURNING *"  # an INSERT's rows, as Postgres computed them


def value_select(expr: str, pg_type: str, *, is_set: bool, has_subquery: bool) -> str:
    """The SELECT that reads a pushed-down value (``expr``) as ``pg_type``: one row, or one
    per element of a set (an ``IN (SELECT …)``, an array of ``= ANY``)."""
    if is_set and has_subquery:
        return f"SELECT (_gs_v)::{pg_type} FROM ({expr}) AS _gs_s(_gs_v)"
    if is_set:
        # The array cast types a bare $n, as Postgres infers it for col = ANY($n).
        return f"SELECT (_gs_v)::{pg_type} FROM unnest(({expr})::{pg_type}[]) AS _gs_s(_gs_v)"
    return f"SELECT ({expr})::{pg_type}"


def fill_table(name: str, schema: str, rows_sql: str) -> str:
    """The INSERT that lays rows (``rows_sql``, a FROM item) into the table ``schema.name``."""
    return f"INSERT INTO {qualified(name, schema)} SELECT * FROM {rows_sql}"


def returning_alias(alias: str) -> str:
    """A write's RETURNING of its target's own columns, whatever else FROM or USING brings
    into the statement."""
    return f"RETURNING {quote_ident(alias)}.*"


def returning_over(plan: Plan, rows_sql: str) -> str:
    """The client's RETURNING list of a write (``plan``), read over the rows it wrote or
    affected (``rows_sql``, a FROM item aliased as the target)."""
    assert plan.returning_span is not None  # only a write with RETURNING asks
    start, end = plan.returning_span
    returning = plan.sql[start:end].strip()[len("RETURNING"):]
    return f"SELECT {returning} FROM {rows_sql}"
