"""Calls of ``fn.<name>(…)`` in a statement: found, checked, evaluated once, rewritten.

A function call is evaluated like a resource is resolved: before the statement
runs, once per distinct (function, argument values) per statement, however
often the statement mentions it or the engine would evaluate it. Its text is
then replaced by its result, a jsonb parameter, and the statement runs on the
sidecar as written otherwise.

- Finding (pure; cached by statement text): every ``FuncCall`` named
  ``fn.<name>``, with the span of its text (name to closing parenthesis). The
  *outermost* calls are rewritten; a call inside another's arguments is
  evaluated while that call's arguments are.
- Checking (pure, before anything is called): arguments must be values, as
  pushed-down resource arguments are: literals, ``$n``, casts, expressions and
  uncorrelated subqueries. A column of the statement's rows, an aggregate or
  window function, a correlated subquery, or a CTE of the statement is an
  error with a HINT. A call in RETURNING, or in FROM with ORDINALITY, ROWS FROM
  or a column definition list, is not supported.
- Evaluating the arguments: one statement ``SELECT fn.a(<args as written>),
  fn.b(…)`` (marked ``EVAL_MARK``), run through the session like any read, so
  resources in argument subqueries are resolved and nested calls evaluated
  first, with ``EVALUATING`` on: there the shell functions return their
  arguments (``jsonb_build_array(args, <named params>)``), so Postgres matches
  named arguments, casts values to the declared types and words each mistake.
- Calling: the JSON object ``args`` with the non-NULL named arguments laid
  over it is validated by the function's input schema (every new call of the
  statement before any is made), then each distinct call is made once through
  the guard (budget, timeout, concurrency, audit) and shared through the
  statement's memo.
- Rewriting: each outermost call becomes ``(SELECT $k::jsonb AS "<name>")``, a
  scalar subquery whose column is named as Postgres names the call's (so
  ``SELECT fn.echo(…)`` still has a column ``echo``); in FROM it also gets the
  alias Postgres gives a function there. Identical calls share one ``$k``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pglast import ast, parser

from glove_scratchpad import errors
from glove_scratchpad.catalog import EVALUATING, FN_SCHEMA, quote_ident
from glove_scratchpad.resources import Fn, FnCatalog

from glove_scratchpad.catalog import Param, Step

if TYPE_CHECKING:
    from .analysis import Plan
    from .session import Session, _Statement

__all__ = ["EVAL_MARK", "FnCall", "explain_lines", "find_calls", "substitute"]

log = logging.getLogger(__name__)

# Ends the statements that evaluate calls' arguments: their top-level calls are the ones
# being evaluated, never rewritten (a client sending the same text gets the shell's error).
EVAL_MARK = "/* glove_scratchpad: fn arguments */"
CACHE_SIZE = 4096  # statement texts whose calls are kept

_STATEMENTS = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)
_EVALUATING_ON = Step(f"SELECT set_config('{EVALUATING}', 'on', true)", rows=False)

_ROWS_HINT = (
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


def _fn_name(node: Any) -> str | None:
    """``name`` when ``node`` calls ``fn.name``."""
    if not isinstance(node, ast.FuncCall):
        return None
    parts = [getattr(s, "sval", None) for s in node.funcname or ()]
    if len(parts) == 2 and parts[0] == FN_SCHEMA and isinstance(parts[1], str):
        return parts[1]
    return None


def _nodes(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple | list):
        for item in node:
            yield from _nodes(item)
    elif isinstance(node, ast.Node):
        yield node
        for name in getattr(node, "__slots__", ()):
            yield from _nodes(getattr(node, name, None))


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


def _at(exc: errors.SqlError, location: Any) -> errors.SqlError:
    if isinstance(location, int) and location >= 0:
        exc.position = location + 1
    return exc


class _Finder:
    def __init__(self, sql: str) -> None:
        self.sql = sql
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
                for inner in _nodes(n.returningClause):
                    if _fn_name(inner):
                        raise _at(errors.FeatureNotSupported(
                            "fn.* functions cannot be called in RETURNING",
                            hint="Call the function in the statement's SELECT (or a later "
                            "statement) instead."), inner.location)
        if isinstance(n, ast.RangeFunction):
            for item in n.functions or ():
                func = item[0] if isinstance(item, tuple | list) else item
                if _fn_name(func):
                    self.call(func, ctes, inside, n)
                else:
                    self.visit(item, ctes, inside)
            return
        if _fn_name(n):
            self.call(n, ctes, inside, None)
            return
        for slot in n.__slots__:
            self.visit(getattr(n, slot, None), ctes, inside)

    def call(self, fc: Any, ctes: frozenset[str], inside: bool, rf: Any) -> None:
        name = _fn_name(fc)
        assert name is not None
        column, alias = name, None
        if rf is not None:
            coldefs = any(isinstance(i, tuple | list) and len(i) > 1 and i[1]
                          for i in rf.functions or ())
            if rf.ordinality or rf.is_rowsfrom or len(rf.functions or ()) > 1 or coldefs:
                raise _at(errors.FeatureNotSupported(
                    f"fn.{name} in FROM … WITH ORDINALITY, ROWS FROM or with a column "
                    "definition list is not supported",
                    hint=f"Select it as a value (SELECT fn.{name}(…)), or expand its result: "
                    f"FROM jsonb_array_elements(fn.{name}(…)) WITH ORDINALITY."), fc.location)
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
        raise errors.SyntaxError("unbalanced parentheses in a call of fn.*")  # parsed: never

    # -- the arguments are values -----------------------------------------------------

    def check(self, fc: Any, name: str, ctes: frozenset[str]) -> None:
        for arg in fc.args or ():
            value = arg.arg if isinstance(arg, ast.NamedArgExpr) else arg
            for n in _outside_subqueries(value):
                if isinstance(n, ast.ColumnRef):
                    shown = ".".join(getattr(f, "sval", "*") for f in n.fields or ())
                    raise _at(errors.FeatureNotSupported(
                        f'the arguments of fn.{name} reference the statement\'s rows'
                        f' (column "{shown}")', hint=_ROWS_HINT), n.location)
                if isinstance(n, ast.FuncCall) and (n.over is not None or n.agg_star):
                    raise _at(errors.FeatureNotSupported(
                        f"the arguments of fn.{name} use an aggregate or window function over"
                        " the statement's rows", hint=_ROWS_HINT), n.location)
                if isinstance(n, ast.SubLink):
                    self.uncorrelated(n.subselect, name, ctes)

    def uncorrelated(self, subselect: Any, name: str, ctes: frozenset[str]) -> None:
        inner_ctes = {n.ctename for n in _nodes(subselect) if isinstance(n, ast.CommonTableExpr)}
        names = set(inner_ctes)
        for n in _nodes(subselect):
            if isinstance(n, ast.RangeVar):
                if n.schemaname is None and n.relname in ctes and n.relname not in inner_ctes:
                    raise _at(errors.FeatureNotSupported(
                        f'the arguments of fn.{name} read "{n.relname}", a CTE of the'
                        " statement", hint=_ROWS_HINT + " Repeat the CTE's query inside the"
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
        for n in _nodes(subselect):
            if isinstance(n, ast.ColumnRef):
                fields = [str(f.sval) for f in n.fields or () if isinstance(f, ast.String)]
                if len(fields) >= 2 and len(fields) == len(n.fields or ()) and (
                        fields[-2] not in names):
                    raise _at(errors.FeatureNotSupported(
                        f"the arguments of fn.{name} hold a subquery that references the"
                        f' statement\'s rows (column "{".".join(fields)}")', hint=_ROWS_HINT),
                        n.location)


_cache: dict[str, tuple[FnCall, ...]] = {}


def find_calls(sql: str, node: Any) -> tuple[FnCall, ...]:
    """Every call of a function in one statement (``node``: the RawStmt's ``stmt``).

    Raises the first call whose arguments are not values. Cached by ``sql``.
    """
    found = _cache.get(sql)
    if found is not None:
        return found
    finder = _Finder(sql)
    if sql.endswith(EVAL_MARK) and isinstance(node, ast.SelectStmt):
        # The calls being evaluated are not rewritten; calls in their arguments are.
        for target in node.targetList or ():
            finder.visit(target.val.args, frozenset(), False)
    else:
        finder.visit(node, frozenset(), False)
    found = tuple(finder.calls)
    if len(_cache) >= CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[sql] = found
    return found


# -- evaluating -------------------------------------------------------------------------


def _renumbered(sql: str, spans: Sequence[tuple[int, int]]) -> tuple[list[str], list[int]]:
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


async def _arguments(session: Session, plan: Plan, calls: Sequence[FnCall],
                     params: list[Param], ctx: _Statement) -> list[list[Any]]:
    """Each call's arguments as Postgres evaluated them: [args, <named params>…]."""
    from .session import parse

    texts, used = _renumbered(plan.sql, [c.span for c in calls])
    starts, offset = [], len("SELECT ")
    for text in texts:
        starts.append(offset)
        offset += len(text) + 2
    sql = "SELECT " + ", ".join(texts) + " " + EVAL_MARK
    sub_params = [params[n - 1] for n in used if n <= len(params)]
    try:
        eval_plan = session._plan(parse(sql)[0])
        rows = await session._resolve_all(eval_plan.reads, sub_params, ctx)
        result = await session._run(eval_plan, rows, sub_params, ctx, prelude=_EVALUATING_ON,
                                    formats=(0,) * len(calls))
    except errors.SqlError as exc:
        which = calls[0]
        if exc.position is not None:
            for call, start in zip(calls, starts, strict=True):
                if exc.position - 1 >= start:
                    which = call
            exc.position = which.location + 1
        elif len(calls) == 1:
            exc.position = which.location + 1
        _explain_error(exc, session.db.fns.get(which.name), which.name)
        raise
    values = result.data_rows[0].values
    return [[None] if v is None else json.loads(bytes(v)) for v in values]


def _explain_error(exc: errors.SqlError, fn: Fn | None, name: str) -> None:
    about = f"It takes fn.{fn.signature()}. " if fn is not None else ""
    if exc.sqlstate == "42883":
        exc.hint = (f"{about}Name arguments as declared (\\df+ fn.{name} describes them), give "
                    "one JSON object as args, or cast a value to its declared type.")
    elif exc.sqlstate in ("42703", "42P01") and not (exc.hint or "").strip():
        exc.hint = _ROWS_HINT


def _arguments_object(fn: Fn, call: FnCall, values: list[Any]) -> dict[str, Any]:
    given, named = values[0], values[1:]
    if given is None:
        arguments: dict[str, Any] = {}
    elif isinstance(given, dict):
        arguments = dict(given)
    else:
        raise errors.InvalidParameterValue(
            f"fn.{fn.name} takes its arguments as a JSON object, not"
            f" {type(given).__name__ if not isinstance(given, list) else 'an array'}",
            detail=f"args = {json.dumps(given, ensure_ascii=False)[:200]}",
            hint=f"""Write fn.{fn.name}('{{"name": value, …}}') or name them:"""
            f" fn.{fn.name}(name => value). \\df+ fn.{fn.name} describes them.",
            position=call.location + 1)
    for param, value in zip(fn.params, named, strict=False):
        if value is not None:  # NULL: not given (every named parameter defaults to NULL)
            arguments[param.key] = value
    return arguments


def _key(fn: Fn, arguments: dict[str, Any]) -> tuple[str, str]:
    return (f"{FN_SCHEMA}.{fn.name}", json.dumps(arguments, sort_keys=True, default=str))


async def _call(session: Session, fn: Fn, validated: Any, arguments: dict[str, Any],
                ctx: _Statement) -> str | None:
    """One call, under the guard's concurrency, timeout and audit: its result as JSON."""
    shown = f"{FN_SCHEMA}.{fn.name}"
    try:
        out = await session.db.guard.call(
            shown, "call", lambda: fn.invoke(validated), arguments=arguments,
            user=session.user, session=session.id, statement=ctx.sql)
    except errors.SqlError as exc:
        if shown not in exc.message:
            exc.message = f"function {shown} failed: {exc.message}"
            exc.args = (exc.message,)
        raise
    except Exception as exc:
        log.info("function %s failed", shown, exc_info=exc)
        raise errors.ExternalRoutineError(
            f"function {shown} failed: {type(exc).__name__}: {exc}"[:1000],
            hint=f"The tool behind {shown} reported this error. Check the arguments against "
            f"\\df+ {shown} and try again.") from exc
    return fn.result_json(out)


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # a failure another call of the statement already raised


async def evaluate(session: Session, plan: Plan, calls: Sequence[FnCall], params: list[Param],
                   ctx: _Statement) -> list[tuple[tuple[str, str], str | None]]:
    """Each call's (key, result as JSON text), each distinct call made once per statement."""
    catalog: FnCatalog = session.db.fns
    values = await _arguments(session, plan, calls, params, ctx)
    keyed = []
    for call, vals in zip(calls, values, strict=True):
        fn = catalog[call.name]
        arguments = _arguments_object(fn, call, vals)
        keyed.append((call, fn, arguments, _key(fn, arguments)))
    new: dict[tuple[str, str], tuple[FnCall, Fn, dict[str, Any]]] = {}
    for call, fn, arguments, key in keyed:
        if key not in ctx.memo and key not in new:
            new[key] = (call, fn, arguments)
    # Every new call's arguments are checked before any call is made.
    validated = {}
    for key, (call, fn, arguments) in new.items():
        try:
            validated[key] = fn.validate(arguments)
        except errors.SqlError as exc:
            raise _at(exc, call.location) from None
    if new:
        session.db.guard.check_budget(ctx.planned + len(new))
        ctx.planned += len(new)
    for key, (_call_site, fn, arguments) in new.items():
        fut = asyncio.ensure_future(_call(session, fn, validated[key], arguments, ctx))
        fut.add_done_callback(_retrieve)
        ctx.memo[key] = fut
        ctx.touch(key[0], "call", arguments, called=True)
    for _call_site, _fn, arguments, key in keyed:
        if key not in new:
            ctx.touch(key[0], "call", arguments, called=False)
    results = await asyncio.gather(*(asyncio.shield(ctx.memo[key]) for *_, key in keyed))
    return [(key, text) for (*_, key), text in zip(keyed, results, strict=True)]


async def substitute(session: Session, plan: Plan, params: list[Param], args: list[Param],
                     ctx: _Statement) -> list[tuple[int, int, str]]:
    """Evaluate the statement's outermost calls; their results are appended to ``args``.
    Returns the text edits that put each result in its call's place."""
    calls = [c for c in find_calls(plan.sql, plan.node) if c.outermost]
    if not calls:
        return []
    slots: dict[tuple[str, str], int] = {}
    edits = []
    for call, (key, text) in zip(calls, await evaluate(session, plan, calls, params, ctx),
                                 strict=True):
        k = slots.get(key)
        if k is None:
            args.append(Param(None if text is None else text.encode()))
            k = slots[key] = len(args)
        replacement = f"(SELECT ${k}::jsonb AS {quote_ident(call.column)})"
        if call.from_alias is not None:
            replacement += f" AS {quote_ident(call.from_alias)}"
        edits.append((call.span[0], call.span[1], replacement))
    _orphans_typed(plan.sql, [c.span for c in calls], args)
    return edits


def _orphans_typed(sql: str, spans: Sequence[tuple[int, int]], args: list[Param]) -> None:
    """Give a type to each ``$n`` that only calls' arguments used: the rewritten statement
    no longer mentions it, so Postgres could not infer one ("could not determine the data
    type of parameter $n")."""
    inside: set[int] = set()
    outside: set[int] = set()
    for tok in parser.scan(sql):
        if tok.name == "PARAM":
            number = int(sql[tok.start + 1:tok.end + 1])
            within = any(s <= tok.start < e for s, e in spans)
            (inside if within else outside).add(number)
    for number in inside - outside:
        param = args[number - 1] if number <= len(args) else None
        if param is not None and param.oid == 0:
            # text takes any text value; bytea any binary one. Neither is read.
            args[number - 1] = Param(param.value, param.format, 17 if param.format else 25)


# -- EXPLAIN ----------------------------------------------------------------------------


def explain_lines(sql: str) -> list[str]:
    """What EXPLAIN says of the calls of a statement (its text); nothing is called."""
    from .session import parse

    try:
        calls = find_calls(sql, parse(sql)[0].node)
    except errors.SqlError as exc:
        return [f"Function calls: WARNING: {exc.message}"]
    lines = []
    for call in calls:
        args = " ".join(sql[call.args_span[0]:call.args_span[1]].split()) or "none"
        when = ("once, before the statement runs" if call.outermost
                else "once, first: it is an argument of another call")
        lines.append(f"Function {FN_SCHEMA}.{call.name}: arguments: {args}; calls: {when}")
    return lines
