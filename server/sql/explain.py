"""EXPLAIN's text: a plan in, the lines that describe its calls out. No I/O.

Rules:
- Each resource reference gets a line: its volatility, read or write, the
  arguments it binds and how many calls it will make; a WARNING line for
  anything that would fail (a missing key, a missing verb).
- Nothing here calls a tool: EXPLAIN is free.
"""

from __future__ import annotations

from typing import Any

from pglast import ast

from .analysis import Plan

__all__ = ["reference_lines"]

_VERBS = {ast.InsertStmt: "insert", ast.UpdateStmt: "update", ast.DeleteStmt: "delete"}


def reference_lines(plan: Plan, node: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """The lines EXPLAIN prints for the plan's references, and the same as records."""
    lines: list[str] = []
    refs: list[dict[str, Any]] = []
    for ref in plan.references:
        resource = ref.resource
        access = "write" if ref is plan.target else "read"
        args = {p.column: [v.sql for v in p.values] for p in ref.predicates}
        calls: Any = 1
        for p in ref.predicates:
            if any(v.is_set for v in p.values):
                calls = "one per value"
                break
            if isinstance(calls, int):
                calls *= len(p.values)
        warnings = []
        verb = "select" if access == "read" else _VERBS[type(node)]
        if (access == "write" and not isinstance(node, ast.InsertStmt)
                and resource.primary_key and resource.select):
            calls = f"one {verb} per matching row, after one select"
        if resource.resolver(verb) is None:
            warnings.append(f"{resource.name} has no {verb} (it supports: "
                            f"{', '.join(resource.verbs)})")
        missing = [k for k in resource.keys if k not in args]
        if missing and (access == "read" or not isinstance(node, ast.InsertStmt)):
            for key in missing:
                warnings.append(f"missing required key {key}: add WHERE {key} = …")
        arg_text = " AND ".join(
            f"{c} = {v[0]}" if len(v) == 1 else f"{c} IN ({', '.join(v)})"
            for c, v in args.items()) or "none"
        lines.append(f"Resource {ref.label} ({resource.volatility}, {access}): "
                     f"arguments: {arg_text}; calls: {calls}")
        lines.extend(f"  WARNING: {w}" for w in warnings)
        refs.append({"resource": resource.name, "alias": ref.alias,
                     "volatility": resource.volatility, "access": access,
                     "arguments": args, "calls": calls, "warnings": warnings})
    return lines, refs
