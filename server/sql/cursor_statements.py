"""Cursor statements: DECLARE, FETCH and MOVE judged and read. Pure.

A cursor is a read kept open between statements: ``DECLARE name [BINARY]
[SCROLL | NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query``, then
``FETCH``/``MOVE`` in a direction, then ``CLOSE``.

Rules:
- DECLARE's query is judged as the top-level SELECT it is (the gate's own rules:
  relations, functions, settings); a data-modifying WITH is refused as Postgres
  refuses it (0A000). The grammar admits no other query kind.
- FETCH and MOVE name a cursor and nothing else to judge; what each direction
  means is read here once (``fetch_of``), as Postgres's grammar gives it: NEXT,
  PRIOR, FIRST, LAST, ABSOLUTE n, RELATIVE n, FORWARD/BACKWARD n or ALL.
- ``UPDATE``/``DELETE … WHERE CURRENT OF`` is refused (0A000): a resource's rows have
  no position a cursor could stand on.
- ``FETCH_ALL`` is the grammar's count for ALL (LONG_MAX), kept as it is.
- ``row_wise``: a query whose answer over some of its one table's rows, then over
  the rest, is its answer over all of them, in order: one relation in FROM, no
  WITH, subquery, function call (an aggregate is one), ORDER BY, window, DISTINCT,
  GROUP BY, HAVING, LIMIT or OFFSET, locking clause, INTO or set operation. Only
  such a query can be run a part at a time: a lazy cursor, or a protocol portal
  read as its Executes ask (the one rule for both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pglast import ast, enums

from glove_scratchpad import errors

from .nodes import walk

__all__ = [
    "CURSOR_STATEMENTS",
    "FETCH_ALL",
    "Declared",
    "Fetch",
    "check_current_of",
    "check_declare",
    "declared",
    "fetch_of",
    "row_wise",
]

CURSOR_STATEMENTS = (ast.DeclareCursorStmt, ast.FetchStmt)
FETCH_ALL = 2**63 - 1  # Postgres's FETCH_ALL (LONG_MAX): what ALL parses to

_WRITES = (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)


@dataclass(frozen=True, slots=True)
class Declared:
    """What a DECLARE asks for: the cursor's name, kind and query."""

    name: str
    binary: bool
    scroll: bool | None  # SCROLL, NO SCROLL, or neither said
    hold: bool
    query: Any  # the SelectStmt


@dataclass(frozen=True, slots=True)
class Fetch:
    """A FETCH or MOVE: ``direction`` is forward, backward, absolute or relative."""

    name: str
    direction: str
    count: int
    move: bool


def check_declare(node: ast.DeclareCursorStmt) -> Any:
    """Refuse what Postgres refuses of a DECLARE before it plans; the query to judge."""
    query = node.query
    with_clause = getattr(query, "withClause", None)
    if with_clause is not None and any(isinstance(cte.ctequery, _WRITES)
                                       for cte in with_clause.ctes):
        raise errors.FeatureNotSupported(
            "DECLARE CURSOR must not contain data-modifying statements in WITH",
            hint="Run the write as a statement of its own, then declare the cursor over a "
            "read.")
    return query


def check_current_of(where: Any) -> None:
    """Refuse a write's ``WHERE CURRENT OF cursor``."""
    if any(isinstance(n, ast.CurrentOfExpr) for n in walk(where)):
        raise errors.FeatureNotSupported(
            "WHERE CURRENT OF is not supported: a resource's rows have no position a cursor "
            "stands on", hint="Name the row by its key: UPDATE t SET … WHERE id = ….")


def declared(node: ast.DeclareCursorStmt) -> Declared:
    """A DECLARE's options, from the grammar's bit mask."""
    options = node.options or 0
    scroll = (True if options & enums.CURSOR_OPT_SCROLL
              else False if options & enums.CURSOR_OPT_NO_SCROLL else None)
    return Declared(node.portalname or "", bool(options & enums.CURSOR_OPT_BINARY), scroll,
                    bool(options & enums.CURSOR_OPT_HOLD), node.query)


def fetch_of(node: ast.FetchStmt) -> Fetch:
    """A FETCH or MOVE as a direction and a count (``FETCH_ALL`` for ALL)."""
    direction = node.direction
    assert direction is not None  # the parser sets every enum field
    d = enums.FetchDirection
    word = {d.FETCH_FORWARD: "forward", d.FETCH_BACKWARD: "backward",
            d.FETCH_ABSOLUTE: "absolute", d.FETCH_RELATIVE: "relative"}[direction]
    count = node.howMany if node.howMany is not None else 1
    return Fetch(node.portalname or "", word, count, bool(node.ismove))


def row_wise(query: Any) -> bool:
    """Whether ``query`` may run over its table's rows a part at a time, the parts' answers
    one after another being its answer."""
    return (isinstance(query, ast.SelectStmt) and query.op == enums.SetOperation.SETOP_NONE
            and query.withClause is None and query.valuesLists is None
            and query.intoClause is None
            and not (query.sortClause or query.groupClause or query.havingClause
                     or query.distinctClause or query.windowClause or query.limitCount
                     or query.limitOffset or query.lockingClause)
            and query.fromClause is not None and len(query.fromClause) == 1
            and isinstance(query.fromClause[0], ast.RangeVar)
            and not any(isinstance(n, ast.SubLink | ast.FuncCall | ast.RangeFunction)
                        for n in walk(query)))
