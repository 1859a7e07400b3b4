"""COPY as the gate and the engine read it: which way, over what, with which options.

Rules:
- ``COPY (query) TO STDOUT`` and ``COPY resource [(columns)] TO STDOUT`` are the
  SELECT they name (``CopySpec.select_sql``), judged and planned as that SELECT.
- ``COPY resource [(columns)] FROM STDIN`` is an INSERT into a resource.
- A file or a program, either way, stays refused (42501): the server's files and
  processes are not the client's. So is ``COPY … FROM STDIN`` into anything but a
  resource, and ``WHERE`` on a COPY FROM (write the INSERT … SELECT instead).
- Options are Postgres's own, passed on as the client wrote them, from a list of
  names: none reaches a file, a program or the server's state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pglast import ast, parse_sql
from pglast.stream import RawStream

from glove_scratchpad import errors
from glove_scratchpad.names import quote_ident

from .statement_kinds import refuse_statement

__all__ = ["CopySpec", "copy_spec", "judged_as"]

# Postgres's COPY options, as the parser names them (CSV HEADER is format and header).
_OPTIONS = frozenset((
    "format", "header", "delimiter", "null", "default", "quote", "escape", "force_quote",
    "force_not_null", "force_null", "encoding", "on_error", "log_verbosity", "reject_limit",
))
_FROM_ONLY = frozenset(("force_not_null", "force_null", "on_error", "log_verbosity",
                        "reject_limit", "default"))


@dataclass(frozen=True, slots=True)
class CopySpec:
    """One COPY statement, as the engine runs it."""

    is_from: bool
    options: str  # ``WITH (…)`` as the client gave them, or ""
    binary: bool
    select_sql: str = ""  # TO: the SELECT whose rows are copied
    schema: str | None = None  # the resource named (FROM, or TO a relation)
    relation: str = ""
    columns: tuple[str, ...] = ()  # those named, or () for all


def _options_sql(node: Any) -> str:
    """The options as Postgres reads them, after STDIN or STDOUT."""
    bare = ast.CopyStmt(relation=ast.RangeVar(relname="x", inh=True, relpersistence="p"),
                        is_from=node.is_from, options=node.options)
    text: str = RawStream()(bare)
    return text.partition(" FROM STDIN" if node.is_from else " TO STDOUT")[2].strip()


def copy_spec(node: Any) -> CopySpec:
    """What a COPY statement does, or its refusal."""
    if node.filename is not None or node.is_program:
        refuse_statement(node)  # 42501: a file or program is the server's, not the client's
    binary = False
    for opt in node.options or ():
        name = opt.defname
        if name not in _OPTIONS or (name in _FROM_ONLY and not node.is_from):
            raise errors.FeatureNotSupported(
                f'COPY option "{name}" is not supported'
                + ("" if name in _OPTIONS else " here"),
                hint="Use FORMAT, HEADER, DELIMITER, NULL, QUOTE, ESCAPE, FORCE_QUOTE or "
                "ENCODING (and FORCE_NOT_NULL, FORCE_NULL, DEFAULT, ON_ERROR with FROM).")
        if name == "format" and isinstance(opt.arg, ast.String):
            binary = (opt.arg.sval or "").lower() == "binary"
    if getattr(node, "whereClause", None) is not None:
        raise errors.FeatureNotSupported(
            "COPY FROM with WHERE is not supported",
            hint="COPY the rows in, or write INSERT … SELECT … WHERE.")
    columns = tuple(c.sval for c in node.attlist or ())
    options = _options_sql(node)
    if node.query is not None:
        if not isinstance(node.query, ast.SelectStmt):
            raise errors.FeatureNotSupported(
                "COPY of an INSERT, UPDATE or DELETE is not supported",
                hint="COPY (SELECT …) TO STDOUT reads; write with the statement alone.")
        return CopySpec(False, options, binary, select_sql=RawStream()(node.query))
    rel = node.relation
    if rel is None:
        raise errors.FeatureNotSupported("COPY names neither a table nor a query",
                                         hint="COPY resource TO STDOUT, or COPY (SELECT …).")
    spec = CopySpec(bool(node.is_from), options, binary, schema=rel.schemaname,
                    relation=rel.relname, columns=columns)
    if node.is_from:
        return spec
    cols = ", ".join(map(quote_ident, columns)) if columns else "*"
    name = quote_ident(rel.relname)
    table = f"{quote_ident(rel.schemaname)}.{name}" if rel.schemaname else name
    return CopySpec(False, options, binary, select_sql=f"SELECT {cols} FROM {table}",
                    schema=rel.schemaname, relation=rel.relname, columns=columns)


def judged_as(node: Any, is_resource: Callable[[str | None, str], bool]) -> Any:
    """The statement the gate judges for ``node``: a COPY TO's SELECT; for a COPY FROM
    into a resource, a read of it (what an INSERT's target is judged as); else ``node``."""
    if not isinstance(node, ast.CopyStmt):
        return node
    spec = copy_spec(node)
    if not spec.is_from:
        return parse_sql(spec.select_sql)[0].stmt
    if not is_resource(spec.schema, spec.relation):
        raise errors.InsufficientPrivilege(
            f'COPY FROM STDIN writes only into a resource: "{spec.relation}" is not one',
            hint="COPY into a resource's table; SELECT * FROM scratchpad.resources lists them.")
    rel = ast.RangeVar(schemaname=spec.schema, relname=spec.relation, inh=True,
                       relpersistence="p")
    return ast.SelectStmt(targetList=(), fromClause=(rel,), limitOption=None, op=None)
