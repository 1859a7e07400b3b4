"""EXPLAIN's text: a plan in, the lines that describe its calls out. No I/O.

Rules:
- Each resource reference gets a line: its volatility, read or write, its keys
  and where their values come from (a constant, a parameter, one call per
  distinct value of another table's column), its filters, its limit, how many
  calls it will make (or what that depends on), and which references share a
  call; a WARNING line for anything that would fail (a missing key or verb);
  the retries and rate limit the resource declares.
- Nothing here calls a tool: EXPLAIN is free.
"""

from __future__ import annotations

from typing import Any

from pglast import ast

from .analysis import Condition, Plan, Reference

__all__ = ["reference_lines"]

_VERBS = {ast.InsertStmt: "insert", ast.UpdateStmt: "update", ast.DeleteStmt: "delete"}


def reference_lines(plan: Plan, node: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """The lines EXPLAIN prints for the plan's references, and the same as records."""
    lines: list[str] = []
    refs: list[dict[str, Any]] = []
    shared = _shared(plan)
    for ref in plan.references:
        resource = ref.resource
        access = "write" if ref is plan.target else "read"
        verb = "select" if access == "read" else _VERBS[type(node)]
        keys = {p.column: [v.described for v in p.values] for p in ref.predicates}
        filters = [_condition_text(c) for c in ref.conditions]
        calls = _calls(ref)
        if (access == "write" and not isinstance(node, ast.InsertStmt)
                and resource.primary_key and resource.select):
            calls = f"one {verb} per matching row, after one select"
        warnings = []
        if resource.resolver(verb) is None:
            warnings.append(f"{resource.name} has no {verb} (it supports: "
                            f"{', '.join(resource.verbs)})")
        missing = [k for k in resource.keys if k not in keys]
        if missing and (access == "read" or not isinstance(node, ast.InsertStmt)):
            for key in missing:
                warnings.append(f"missing required key {key}: add WHERE {key} = …, or join "
                                "it to another table's column")
        key_text = "; ".join(
            f"{c} from {v[0]}" if len(v) == 1 else f"{c} IN ({', '.join(v)})"
            for c, v in keys.items()) or "none"
        parts = [f"keys: {key_text}"]
        if filters:
            parts.append(f"filters: {', '.join(filters)}")
        if ref.limit is not None:
            total = ref.limit.described + (f" + {ref.offset.described}" if ref.offset else "")
            parts.append(f"limit: {total}"
                         + (" (the server stops reading there)" if ref.keys_only else ""))
        parts.append(f"calls: {calls}")
        if ref.id in shared:
            parts.append(f"shares its calls with {shared[ref.id]}")
        lines.append(f"Resource {ref.label} ({resource.volatility}, {access}): "
                     + "; ".join(parts))
        lines.extend(f"  WARNING: {w}" for w in warnings)
        lines.extend(_reliability_lines(resource, access))
        refs.append({"resource": resource.name, "alias": ref.alias,
                     "volatility": resource.volatility, "access": access,
                     "arguments": keys, "filters": filters, "calls": calls,
                     "warnings": warnings, "retries": resource.retries if access == "read"
                     else 0, "rate": resource.rate})
    return lines, refs


def _condition_text(c: Condition) -> str:
    if not c.values:
        return f"{c.column} {c.op.upper()}"
    if c.op == "in":
        return f"{c.column} IN ({', '.join(v.source or v.sql for v in c.values)})"
    value = c.values[0].source or c.values[0].sql
    return f"{c.column} {c.op.upper() if c.op.isalpha() else c.op} {value}"


def _calls(ref: Reference) -> str | int:
    """How many calls a reference makes: a number, or what it depends on."""
    calls = 1
    for p in ref.predicates:
        feeds = [v.described for v in p.values if v.is_set]
        if feeds:
            return feeds[0] if feeds[0].startswith("one call per") else \
                "one per value of " + feeds[0]
        calls *= len(p.values)
    return calls


def _shared(plan: Plan) -> dict[int, str]:
    """References of a resource whose arguments are the same text: one call serves them."""
    out: dict[int, str] = {}
    for ref in plan.references:
        same = [o.label for o in plan.references if o is not ref and o.name == ref.name
                and o.access == ref.access == "read"
                and _arguments(o) == _arguments(ref)]
        if same:
            out[ref.id] = ", ".join(same)
    return out


def _arguments(ref: Reference) -> Any:
    return (sorted((p.column, tuple(v.sql for v in p.values)) for p in ref.predicates),
            sorted((c.column, c.op, tuple(v.sql for v in c.values)) for c in ref.conditions))


def _reliability_lines(resource: Any, access: str) -> list[str]:
    """The retries and rate limit a resource declares."""
    lines = []
    if resource.retries and access == "read":
        lines.append(f"  Retries: up to {resource.retries}, on TransientError or a timeout, "
                     "with exponential backoff and jitter")
    elif resource.retries:
        lines.append("  Retries: none: a write is never retried by itself")
    if resource.rate:
        calls, seconds = resource.rate
        lines.append(f"  Rate limit: {calls} call{'s' if calls != 1 else ''} per {seconds:g} s, "
                     "shared by every session; calls over it wait")
    return lines
