"""Calls of ``fn.<name>(…)`` in a statement: evaluated once, called, rewritten.

A function call is evaluated like a resource is resolved: before the statement
runs, once per distinct (function, argument values) per statement, however
often the statement mentions it or the engine would evaluate it. Its text is
then replaced by its result, a jsonb parameter, and the statement runs on the
sidecar as written otherwise. Finding and checking the calls is pure
(``sql.fn_calls``); this module does the rest:

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
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pglast import parser

from glove_scratchpad import errors
from glove_scratchpad.catalog import EVALUATING, Step, quote_ident
from glove_scratchpad.redaction import redact_secrets
from glove_scratchpad.resources import Fn, FnCatalog
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan
from ..sql.fn_calls import (
    EVAL_MARK,
    ROWS_HINT,
    FnCall,
    at_location,
    explain_lines,
    find_calls,
    renumbered,
)
from ..sql.parse import parse
from .result import Result

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["explain_lines", "explained", "find_calls", "substitute"]


log = logging.getLogger(__name__)

_EVALUATING_ON = Step(f"SELECT set_config('{EVALUATING}', 'on', true)", rows=False)


class Read(Protocol):
    """A read within the statement, resolved and run (``resolve.read``)."""

    async def __call__(self, st: Statement, plan: Plan, params: list[Param],
                       ctx: Statement, formats: Sequence[int] = (),
                       prelude: Step | None = None) -> Result: ...


async def _arguments(st: Statement, plan: Plan, calls: Sequence[FnCall],
                     params: list[Param], ctx: Statement, read: Read
                     ) -> list[list[Any]]:
    """Each call's arguments as Postgres evaluated them: [args, <named params>…]."""
    texts, used = renumbered(plan.sql, [c.span for c in calls])
    starts, offset = [], len("SELECT ")
    for text in texts:
        starts.append(offset)
        offset += len(text) + 2
    sql = "SELECT " + ", ".join(texts) + " " + EVAL_MARK
    sub_params = [params[n - 1] for n in used if n <= len(params)]
    try:
        eval_plan = st.plan(parse(sql)[0])
        result = await read(st, eval_plan, sub_params, ctx, (0,) * len(calls),
                                    prelude=_EVALUATING_ON)
    except errors.SqlError as exc:
        which = calls[0]
        position = exc.position
        if exc.position is not None:
            for call, start in zip(calls, starts, strict=True):
                if exc.position - 1 >= start:
                    which = call
            position = which.location + 1
        elif len(calls) == 1:
            position = which.location + 1
        hint = _explained_hint(exc, st.services.fns.get(which.name), which.name,
                               st.services.schemas.fns)
        raise exc.replaced(position=position, hint=hint) from None
    values = result.data_rows[0].values
    return [[None] if v is None else json.loads(bytes(v)) for v in values]


def explained(st: Statement, exc: errors.UndefinedFunction) -> errors.SqlError:
    """A 42883 that Postgres found in a call of ``fn.<name>``, with how to call it."""
    schema = st.services.schemas.fns
    found = re.search(rf"function {re.escape(schema)}\.(\w+)\(", exc.message)
    if found is None or not st.services.fns:
        return exc
    name = found.group(1)
    return exc.replaced(hint=_explained_hint(exc, st.services.fns.get(name), name, schema))


def _explained_hint(exc: errors.SqlError, fn: Fn | None, name: str, schema: str
                    ) -> str | None:
    """The HINT of an error in a call's arguments: how to call the function."""
    about = f"It takes {schema}.{fn.signature()}. " if fn is not None else ""
    if isinstance(exc, errors.UndefinedFunction):
        return (f"{about}Name arguments as declared (\\df+ {schema}.{name} describes them), "
                "give one JSON object as args, or cast a value to its declared type.")
    if isinstance(exc, errors.UndefinedColumn | errors.UndefinedTable) and not (
            exc.hint or "").strip():
        return ROWS_HINT
    return exc.hint


def _arguments_object(fn: Fn, call: FnCall, values: list[Any], schema: str
                      ) -> dict[str, Any]:
    given, named = values[0], values[1:]
    shown = f"{schema}.{fn.name}"
    if given is None:
        arguments: dict[str, Any] = {}
    elif isinstance(given, dict):
        arguments = dict(given)
    else:
        raise errors.InvalidParameterValue(
            f"{shown} takes its arguments as a JSON object, not"
            f" {type(given).__name__ if not isinstance(given, list) else 'an array'}",
            detail=f"args = {json.dumps(given, ensure_ascii=False)[:200]}",
            hint=f"""Write {shown}('{{"name": value, …}}') or name them:"""
            f" {shown}(name => value). \\df+ {shown} describes them.",
            position=call.location + 1)
    for param, value in zip(fn.params, named, strict=False):
        if value is not None:  # NULL: not given (every named parameter defaults to NULL)
            arguments[param.key] = value
    return arguments


def _key(fn: Fn, arguments: dict[str, Any], schema: str) -> tuple[str, str]:
    return (f"{schema}.{fn.name}", json.dumps(arguments, sort_keys=True, default=str))


async def _call(st: Statement, fn: Fn, validated: Any, arguments: dict[str, Any],
                ctx: Statement) -> str | None:
    """One call, under the guard's concurrency, timeout and audit: its result as JSON."""
    shown = f"{st.services.schemas.fns}.{fn.name}"
    try:
        out = await st.services.guard.call(
            shown, "call", lambda: fn.invoke(validated), arguments=arguments,
            user=st.user, session=st.session_id, statement=ctx.sql)
    except errors.SqlError as exc:
        if shown in exc.message:
            raise
        raise exc.replaced(message=f"function {shown} failed: {exc.message}") from None
    except Exception as exc:
        log.info("function %s failed", shown, exc_info=exc)
        raise errors.ExternalRoutineError(
            redact_secrets(f"function {shown} failed: {type(exc).__name__}: {exc}")[:1000],
            hint=f"The tool behind {shown} reported this error. Check the arguments against "
            f"\\df+ {shown} and try again.") from exc
    return fn.result_json(out)


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # a failure another call of the statement already raised


async def call_all(st: Statement, plan: Plan, calls: Sequence[FnCall], params: list[Param],
                   ctx: Statement, read: Read) -> list[tuple[tuple[str, str], str | None]]:
    """Each call's (key, result as JSON text), each distinct call made once per statement."""
    catalog: FnCatalog = st.services.fns
    schema = st.services.schemas.fns
    values = await _arguments(st, plan, calls, params, ctx, read)
    keyed = []
    for call, vals in zip(calls, values, strict=True):
        fn = catalog[call.name]
        arguments = _arguments_object(fn, call, vals, schema)
        keyed.append((call, fn, arguments, _key(fn, arguments, schema)))
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
            raise at_location(exc, call.location) from None
    if new:
        st.services.guard.check_budget(ctx.planned + len(new))
        ctx.planned += len(new)
    for key, (_call_site, fn, arguments) in new.items():
        fut = asyncio.ensure_future(_call(st, fn, validated[key], arguments, ctx))
        fut.add_done_callback(_retrieve)
        ctx.memo[key] = fut
        ctx.touch(key[0], "call", arguments, called=True)
    for _call_site, _fn, arguments, key in keyed:
        if key not in new:
            ctx.touch(key[0], "call", arguments, called=False)
    results = await asyncio.gather(*(asyncio.shield(ctx.memo[key]) for *_, key in keyed))
    return [(key, text) for (*_, key), text in zip(keyed, results, strict=True)]


async def substitute(st: Statement, plan: Plan, params: list[Param], args: list[Param],
                     ctx: Statement, read: Read) -> list[tuple[int, int, str]]:
    """Evaluate the statement's outermost calls; their results are appended to ``args``.
    Returns the text edits that put each result in its call's place."""
    calls = [c for c in find_calls(plan.sql, plan.node, st.services.schemas.fns)
             if c.outermost]
    if not calls:
        return []
    slots: dict[tuple[str, str], int] = {}
    edits = []
    for call, (key, text) in zip(calls, await call_all(st, plan, calls, params, ctx, read),
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
