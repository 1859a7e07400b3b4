"""EXPLAIN ANALYZE: run the statement as Postgres does, and say what it really did.

Rules:
- The statement runs: a SELECT makes its calls; a write inside BEGIN is staged,
  not fired; a write outside a transaction block fires, as ``EXPLAIN ANALYZE
  INSERT`` does in Postgres.
- The plan shows, per resource, each distinct call: its arguments (as the audit
  shows them: secrets redacted), its rows, the time the statement waited for
  them, and whether it was called, answered from a cache, or read from its kept
  table. Then the sidecar's own EXPLAIN ANALYZE of the query over those rows (of
  a write: the sidecar's plan, and what the write did).
- ``FORMAT JSON`` gives one JSON document: the calls and the sidecar's plan.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.redaction import redact_secrets
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan, deparse
from ..sql.parse import ParsedStatement, parse
from . import chains
from .explain import explain_statement
from .result import Result, Touched

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["analyzing", "explain_analyze"]

Planned = Callable[["Statement", ParsedStatement, Plan, list[Param]], Awaitable[Result]]


def _option(node: Any, name: str) -> Any:
    for opt in node.options or ():
        if opt.defname == name:
            arg = opt.arg
            return True if arg is None else getattr(arg, "sval", None) or getattr(
                arg, "boolval", None) or getattr(arg, "ival", None)
    return None


def analyzing(node: Any) -> bool:
    """Whether ``node`` is an EXPLAIN with ANALYZE (on)."""
    value = _option(node, "analyze")
    return value is not None and str(value).lower() not in ("false", "off", "0")


def _call(t: Touched) -> dict[str, Any]:
    how = "called" if t.calls else "kept" if t.kept else "cached"
    return {"Resource": t.resource, "Verb": t.verb, "Arguments": t.arguments,
            "Calls": t.calls, "Rows": t.rows, "Time": round(t.ms, 3), "Source": how}


def _call_line(c: dict[str, Any]) -> str:
    args = ", ".join(f"{k} = {v!r}" for k, v in c["Arguments"].items()) or "no arguments"
    return (f"  {c['Resource']} {c['Verb']} ({args}): {c['Source']}, calls={c['Calls']} "
            f"rows={c['Rows']} time={c['Time']:.3f} ms")


async def explain_analyze(st: Statement, node: Any, params: list[Param],
                          planned: Planned) -> Result:
    """``node`` is the EXPLAIN; ``planned`` runs a statement of its plan (the session's)."""
    fmt = str(_option(node, "format") or "text").lower()
    inner = parse(deparse(node.query))[0]
    plan = st.plan(inner)
    if chains.split(inner.node, plan.sql, params) is not None:
        raise errors.FeatureNotSupported(
            "EXPLAIN ANALYZE of a statement with writes in its WITH is not supported",
            hint="EXPLAIN ANALYZE each write as a statement of its own.")
    read = isinstance(inner.node, ast.SelectStmt)
    options = ", ".join(["ANALYZE"] + [
        f"{o.defname.upper()} {_option(node, o.defname)}" for o in node.options or ()
        if o.defname not in ("analyze", "format")] + (["FORMAT JSON"] if fmt == "json" else []))
    if read:
        st.explain = (f"EXPLAIN ({options}) ", plan)
    try:
        out = await planned(st, inner, plan, params)
    finally:
        st.explain = None
    calls = [_call(t) for t in out.touched]
    if read:
        sidecar_plan = [(row.values[0] or b"").decode() for row in out.data_rows]
        done = None
    else:
        plain = await explain_statement(st, plan.sql, inner.node, params)
        sidecar_plan = [str(r[0]) for r in plain.rows or ()]
        done = out.command_tag + (" (staged, not fired)" if out.staged else " (fired)"
                                  if out.command_tag.split(" ")[0] in ("INSERT", "UPDATE",
                                                                      "DELETE") else "")
    if fmt == "json":
        doc: dict[str, Any] = {"Resource Calls": calls}
        if done is not None:
            doc["Write"] = done
        doc["Sidecar"] = json.loads("\n".join(sidecar_plan)) if read else sidecar_plan
        lines = [json.dumps([doc], indent=2)]
    else:
        lines = ["Resource calls:"] + [_call_line(c) for c in calls] if calls else [
            "Resource calls: none"]
        if done is not None:
            lines.append(f"Write: {done}")
        lines += ["Sidecar:"] + ["  " + line for line in sidecar_plan]
    # An argument may carry a configured secret (a token given as a key): never shown.
    result = Result.text("EXPLAIN", ["QUERY PLAN"], [(redact_secrets(line),) for line in lines])
    result.notices = out.notices
    return result
