"""Finding the calls of ``fn.<name>(…)`` in a statement's text. No I/O.

- Finding (cached by statement text): every ``FuncCall`` named ``fn.<name>``,
  with the span of its text (name to closing parenthesis). The *outermost*
  calls are rewritten; a call inside another's arguments is evaluated while
  that call's arguments are.
- Checking (before anything is called): arguments must be values, as
  pushed-down resource arguments are: literals, ``$n``, casts, expressions and
  uncorrelated subqueries. A column of the statement's rows, an aggregate or
  window function, a correlated subquery, or a CTE of the statement is an
  error with a HINT. A call in RETURNING, or in FROM with ORDINALITY, ROWS FROM
  or a column definition list, is not supported.
- ``engine.fns`` evaluates and calls what is found here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast, parser

from glove_scratchpad import errors
from glove_scratchpad.names import FN_SCHEMA

from .nodes import walk
from .parse import parse

__all__ = ["CACHE_SIZE", "EVAL_MARK", "ROWS_HINT", "FnCall", "at_location", "explain_lines",
           "find_calls", "renumbered"]

# Ends the statements that evaluate calls' arguments: their top-level calls are the ones
# being evaluated, never rewritten (a client sending the same text gets the shell's error).
EVAL_MARK = "/* glove_scratchpad: fn arguments */"
CACHE_SIZE = 4096  # statement texts whose calls are kept

_STATEMENTS = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)

ROWS_HINT = (
    "A function is called once per statement, before the query runs, so its arguments must "
    "be values: literals, $n parameters, casts, and subqueries that stand alone. To pass "
    "values from rows, aggregate them in a subquery: fn.f(args => (SELECT jsonb_agg(…) FROM "
    "…)); to call a tool once per row, it has to be served as a resource (a table)."
)


@dataclass(frozen=True, slots=True)
class FnCall:
    """One call of a function in a statement's text."""

    name: str
    node: Any  # the FuncCall
    span: tuple[int, int]  # [start, end): "fn.name(…)"
    args_span: tuple[int, int]  # [start, end): the text between the parentheses
    outermost: bool  # not inside another call's arguments
    column: str  # the column name Postgres gives the call's result
    from_alias: str | None = None  # in FROM without an alias: the alias Postgres gives it

    @property
    def location(self) -> int:
        return self.span[0]


# -- finding and checking -------------------------------------------------------------


def _fn_name(node: Any, schema: str) -> str | None:
    """``name`` when ``node`` calls ``<schema>.name`` (``fn.name`` for the default name)."""
    if not isinstance(node, ast.FuncCall):
        return None
    parts = [getattr(s, "sval", None) for s in node.funcname or ()]
    if len(parts) == 2 and parts[0] == schema and isinstance(parts[1], str):
        return parts[1]
    return None


def _outside_subqueries(node: Any) -> Iterator[Any]:
    """The nodes of an expression, not descending into subqueries (which are yielded)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple | list):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            yield n
            if isinstance(n, ast.SubLink):
                stack.append(n.testexpr)
                continue
            stack.extend(getattr(n, s, None) for s in getattr(n, "__slots__", ()))


def at_location(exc: errors.SqlError, location: Any) -> errors.SqlError:
    """The error again, pointing at ``location`` of the client's text."""
    if isinstance(location, int) and location >= 0:
        return exc.replaced(position=location + 1)
    return exc


class _Finder:
    def __init__(self, sql: str, schema: str) -> None:
        self.sql = sql
        self.schema = schema
        self.tokens = parser.scan(sql)
        self.calls: list[FnCall] = []

    def visit(self, node: Any, ctes: frozenset[str], inside: bool) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, ctes, inside)
            return
        if not isinstance(node, ast.Node):
            return
        n: Any = node
        if isinstance(n, _STATEMENTS):
            if n.withClause is not None:
                ctes = ctes | {c.ctename for c in n.withClause.ctes or ()}
            if not isinstance(n, ast.SelectStmt) and n.returningClause:
                for inner in walk(n.returningClause):
                    if _fn_name(inner, self.schema):
                        raise at_location(errors.FeatureNotSupported(
                            f"{self.schema}.* functions cannot be called in RETURNING",
                            hint="Call the function in the statement's SELECT (or a later "
                            "statement) instead."), inner.location)
        if isinstance(n, ast.RangeFunction):
            for item in n.functions or ():
                func = item[0] if isinstance(item, tuple | list) else item
                if _fn_name(func, self.schema):
                    self.call(func, ctes, inside, n)
                else:
                    self.visit(item, ctes, inside)
            return
        if _fn_name(n, self.schema):
            self.call(n, ctes, inside, None)
            return
        for slot in n.__slots__:
            self.visit(getattr(n, slot, None), ctes, inside)

    def call(self, fc: Any, ctes: frozenset[str], inside: bool, rf: Any) -> None:
        name = _fn_name(fc, self.schema)
        assert name is not None
        column, alias = name, None
        if rf is not None:
            coldefs = any(isinstance(i, tuple | list) and len(i) > 1 and i[1]
                          for i in rf.functions or ())
            if rf.ordinality or rf.is_rowsfrom or len(rf.functions or ()) > 1 or coldefs:
                raise at_location(errors.FeatureNotSupported(
                    f"{self.schema}.{name} in FROM … WITH ORDINALITY, ROWS FROM or with a column "
                    "definition list is not supported",
                    hint=f"Select it as a value (SELECT {self.schema}.{name}(…)), or expand "
                    f"its result: FROM jsonb_array_elements({self.schema}.{name}(…)) WITH "
                    "ORDINALITY."), fc.location)
            if rf.alias is None:
                alias = name
            elif not rf.alias.colnames:
                column = rf.alias.aliasname
        self.check(fc, name, ctes)
        span, args_span = self.spans(fc.location)
        self.calls.append(FnCall(name, fc, span, args_span, not inside, column, alias))
        self.visit((fc.args, fc.agg_order, fc.agg_filter, fc.over), ctes, True)

    def spans(self, location: int) -> tuple[tuple[int, int], tuple[int, int]]:
        tokens = self.tokens
        i = next((k for k, t in enumerate(tokens) if t.start >= location), len(tokens))
        while i < len(tokens) and tokens[i].name != "ASCII_40":
            i += 1
        opened, depth = i, 0
        for k in range(i, len(tokens)):
            if tokens[k].name == "ASCII_40":
                depth += 1
            elif tokens[k].name == "ASCII_41":
                depth -= 1
                if depth == 0:
                    open_end = tokens[opened].end + 1
                    return (location, tokens[k].end + 1), (open_end, tokens[k].start)
        raise errors.SyntaxError("unbalanced parentheses in a call of a function")  # parsed: never

    # -- the arguments are values -----------------------------------------------------

    def check(self, fc: Any, name: str, ctes: frozenset[str]) -> None:
        for arg in fc.args or ():
            value = arg.arg if isinstance(arg, ast.NamedArgExpr) else arg
            for n in _outside_subqueries(value):
                if isinstance(n, ast.ColumnRef):
                    shown = ".".join(getattr(f, "sval", "*") for f in n.fields or ())
                    raise at_location(errors.FeatureNotSupported(
                        f'the arguments of {self.schema}.{name} reference the statement\'s rows'
                        f' (column "{shown}")', hint=ROWS_HINT), n.location)
                if isinstance(n, ast.FuncCall) and (n.over is not None or n.agg_star):
                    raise at_location(errors.FeatureNotSupported(
                        f"the arguments of {self.schema}.{name} use an aggregate or window "
                        "function over the statement's rows", hint=ROWS_HINT), n.location)
                if isinstance(n, ast.SubLink):
                    self.uncorrelated(n.subselect, name, ctes)

    def uncorrelated(self, subselect: Any, name: str, ctes: frozenset[str]) -> None:
        inner_ctes = {n.ctename for n in walk(subselect) if isinstance(n, ast.CommonTableExpr)}
        names = set(inner_ctes)
        for n in walk(subselect):
            if isinstance(n, ast.RangeVar):
                if n.schemaname is None and n.relname in ctes and n.relname not in inner_ctes:
                    raise at_location(errors.FeatureNotSupported(
                        f'the arguments of {self.schema}.{name} read "{n.relname}", a CTE of the'
                        " statement", hint=ROWS_HINT + " Repeat the CTE's query inside the"
                        " argument instead."), n.location)
                names.add(n.alias.aliasname if n.alias else n.relname)
            elif isinstance(n, ast.RangeSubselect | ast.RangeFunction | ast.JoinExpr):
                if n.alias is not None:
                    names.add(n.alias.aliasname)
                if isinstance(n, ast.RangeFunction):
                    for item in n.functions or ():
                        func = item[0] if isinstance(item, tuple | list) else item
                        parts = [getattr(s, "sval", "") for s in getattr(func, "funcname", ())]
                        if parts:
                            names.add(parts[-1])
        for n in walk(subselect):
            if isinstance(n, ast.ColumnRef):
                fields = [str(f.sval) for f in n.fields or () if isinstance(f, ast.String)]
                if len(fields) >= 2 and len(fields) == len(n.fields or ()) and (
                        fields[-2] not in names):
                    raise at_location(errors.FeatureNotSupported(
                        f"the arguments of {self.schema}.{name} hold a subquery that references the"
                        f' statement\'s rows (column "{".".join(fields)}")', hint=ROWS_HINT),
                        n.location)


_cache: dict[tuple[str, str], tuple[FnCall, ...]] = {}


def find_calls(sql: str, node: Any, schema: str = FN_SCHEMA) -> tuple[FnCall, ...]:
    """Every call of a function in one statement (``node``: the RawStmt's ``stmt``);
    ``schema``: the server's function schema.

    Raises the first call whose arguments are not values. Cached by ``sql``.
    """
    found = _cache.get((schema, sql))
    if found is not None:
        return found
    finder = _Finder(sql, schema)
    if sql.endswith(EVAL_MARK) and isinstance(node, ast.SelectStmt):
        # The calls being evaluated are not rewritten; calls in their arguments are.
        for target in node.targetList or ():
            finder.visit(target.val.args, frozenset(), False)
    else:
        finder.visit(node, frozenset(), False)
    found = tuple(finder.calls)
    if len(_cache) >= CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[schema, sql] = found
    return found


# -- evaluating -------------------------------------------------------------------------


def renumbered(sql: str, spans: Sequence[tuple[int, int]]) -> tuple[list[str], list[int]]:
    """The texts of ``spans`` with their ``$n`` renumbered 1..m; and the old numbers."""
    tokens = [t for t in parser.scan(sql) if t.name == "PARAM"]
    mapping: dict[int, int] = {}
    texts = []
    for start, end in spans:
        parts, last = [], start
        for tok in tokens:
            if start <= tok.start and tok.end < end:
                old = int(sql[tok.start + 1:tok.end + 1])
                new = mapping.setdefault(old, len(mapping) + 1)
                parts.append(sql[last:tok.start])
                parts.append(f"${new}")
                last = tok.end + 1
        parts.append(sql[last:end])
        texts.append("".join(parts))
    return texts, list(mapping)


# -- EXPLAIN ----------------------------------------------------------------------------


def explain_lines(sql: str, schema: str = FN_SCHEMA) -> list[str]:
    """What EXPLAIN says of the calls of a statement (its text); nothing is called."""
    try:
        calls = find_calls(sql, parse(sql)[0].node, schema)
    except errors.SqlError as exc:
        return [f"Function calls: WARNING: {exc.message}"]
    lines = []
    for call in calls:
        args = " ".join(sql[call.args_span[0]:call.args_span[1]].split()) or "none"
        when = ("once, before the statement runs" if call.outermost
                else "once, first: it is an argument of another call")
        lines.append(f"Function {schema}.{call.name}: arguments: {args}; calls: {when}")
    return lines
