"""The gate's rules for a session's temporary tables: which DDL they admit. Pure.

A session may keep intermediate results in temporary tables of its own: they
live on its own sidecar connection, under the agent role, and die with it.

Rules:
- Admitted: ``CREATE TEMP TABLE`` (columns, or ``AS`` a query; ``ON COMMIT``
  any), ``SELECT … INTO TEMP``, and ``DROP TABLE`` / ``TRUNCATE`` naming only the
  session's own temporary tables (``is_temp``). Every other DDL stays refused:
  permanent or unlogged tables, views, functions, triggers, rules, sequences.
- A temporary table is named unqualified; it may not take a resource's name
  (Postgres searches ``pg_temp`` first, so it would silently hide the resource
  from every later statement): 42P07.
- No INHERITS, PARTITION, OF type, TABLESPACE, access method, foreign key
  (``REFERENCES``) or LIKE: each names another relation, or the server's storage.
- Column defaults and checks are expressions: the gate's function rules judge
  them (``visit``), as it judges the query of ``AS`` (``select``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pglast import ast, enums
from pglast.parser import scan

from glove_scratchpad import errors

from . import gate
from .allowlist import DISCOVER
from .known import Known
from .statement_kinds import statement_name

__all__ = ["TEMP_HINT", "check", "check_known", "is_temp_statement", "judge", "query_of",
           "query_start", "temp_into", "temp_names"]

TEMP_HINT = ("Temporary tables hold a session's intermediate results: CREATE TEMP TABLE name "
             "(…) or CREATE TEMP TABLE name AS SELECT …; DROP TABLE and TRUNCATE take only "
             "them.")


def temp_into(node: Any) -> bool:
    """Whether ``node`` is a ``SELECT … INTO TEMP name``."""
    into = getattr(node, "intoClause", None)
    return isinstance(node, ast.SelectStmt) and into is not None and (
        into.rel.relpersistence == "t")


def is_temp_statement(node: Any) -> bool:
    """Whether ``node`` is one of the statements this module judges."""
    return (isinstance(node, ast.CreateStmt | ast.TruncateStmt)
            or (isinstance(node, ast.DropStmt)
                and node.removeType == enums.ObjectType.OBJECT_TABLE)
            or (isinstance(node, ast.CreateTableAsStmt)
                and node.objtype == enums.ObjectType.OBJECT_TABLE)
            or temp_into(node))


def query_of(node: Any) -> Any:
    """The statement whose WITH the rewrite extends: CREATE TABLE AS's query, else itself."""
    return node.query if isinstance(node, ast.CreateTableAsStmt) else node


def query_start(sql: str, node: Any) -> int:
    """Where CREATE TABLE AS's query starts in ``sql`` (characters), else 0: after the
    first AS outside parentheses (a column list or WITH (…) come before it)."""
    if not isinstance(node, ast.CreateTableAsStmt):
        return 0
    depth, after = 0, False
    for token in scan(sql):
        if after:
            return len(sql.encode()[:token.start].decode(errors="replace"))
        depth += token.name == "ASCII_40"
        depth -= token.name == "ASCII_41"
        after = depth == 0 and token.name == "AS"
    return 0


def temp_names(node: Any) -> tuple[str, ...]:
    """The tables a CREATE (or SELECT INTO) makes, or a DROP drops."""
    n: Any = node  # pglast's field types are loose; read them as Any
    if isinstance(node, ast.CreateStmt):
        return (str(n.relation.relname),)
    if isinstance(node, ast.CreateTableAsStmt | ast.SelectStmt):
        into = n.into if isinstance(node, ast.CreateTableAsStmt) else n.intoClause
        return (str(into.rel.relname),)
    if isinstance(node, ast.DropStmt):
        return tuple(str(obj[-1].sval) for obj in node.objects or ())
    return ()


def check(node: Any, *, is_resource: gate.IsResource,
          is_temp: Callable[[str], bool] | None = None, **kw: Any) -> None:
    """The gate (``gate.check``, ``kw`` its other arguments) for a session whose
    temporary tables are ``is_temp``: they are read and written as resources are, and
    the statements that make, drop or empty them are judged here, their parts (a
    query, a column's default or check) by the gate."""
    temp = is_temp or (lambda name: False)

    def seen(schema: str | None, name: str) -> bool:
        return is_resource(schema, name) or (schema is None and temp(name))

    if not is_temp_statement(node):
        gate.check(node, is_resource=seen, is_temp=temp, **kw)
        return
    for part in judge(node, is_resource, temp):
        gate.check(part, is_resource=seen, is_temp=temp, **kw)


def check_known(node: Any, known: Known, **kw: Any) -> None:
    """``check`` on the names a statement may use, as the engine hands them (``kw``: the
    gate's other arguments)."""
    check(node, is_resource=known.is_resource, is_temp=known.is_temp,
          is_function=known.is_function, schemas=known.schemas, **kw)


def _refuse(what: str) -> None:
    raise errors.InsufficientPrivilege(f"{what} is not allowed here", hint=TEMP_HINT)


def _new_table(rv: Any, is_resource: Callable[[str | None, str], bool]) -> None:
    if rv.relpersistence != "t":
        _refuse("a permanent or unlogged table")
    if rv.schemaname is not None and rv.schemaname != "pg_temp":
        _refuse(f"a table in schema {rv.schemaname}")
    if rv.catalogname is not None:
        _refuse("a table in another database")
    if rv.relname.startswith("pg_"):
        _refuse(f'a table named "{rv.relname}" (pg_ names are the system\'s)')
    if is_resource(None, rv.relname):
        raise errors.DuplicateTable(
            f'relation "{rv.relname}" already exists: it is a resource',
            hint="A temporary table may not take a resource's name, or it would hide the "
            "resource from every later statement. Choose another name.")


def judge(node: Any, is_resource: Callable[[str | None, str], bool],
          is_temp: Callable[[str], bool]) -> list[Any]:
    """Refuse what temporary tables may not be; return the parts the gate walks on:
    the query of ``AS`` / ``INTO``, and column defaults and checks."""
    if isinstance(node, ast.CreateStmt):
        _new_table(node.relation, is_resource)
        if (node.inhRelations or node.partspec or node.partbound or node.ofTypename
                or node.tablespacename or node.accessMethod):
            _refuse("INHERITS, PARTITION, OF, TABLESPACE or USING")
        walk: list[Any] = []
        for elt in node.tableElts or ():
            if not isinstance(elt, ast.ColumnDef | ast.Constraint):
                _refuse("CREATE TABLE … LIKE")
            for c in (elt.constraints or ()) if isinstance(elt, ast.ColumnDef) else (elt,):
                if c.contype == enums.ConstrType.CONSTR_FOREIGN:
                    _refuse("a foreign key on a temporary table")
                walk.append(c.raw_expr)
            if isinstance(elt, ast.ColumnDef):
                walk.append(elt.raw_default)
        # Each expression judged as the gate judges a SELECT list.
        return [ast.SelectStmt(targetList=(ast.ResTarget(val=e),)) for e in walk
                if e is not None]
    if isinstance(node, ast.CreateTableAsStmt):
        into: Any = node.into
        _new_table(into.rel, is_resource)
        if into.tableSpaceName or into.accessMethod:
            _refuse("TABLESPACE or USING")
        return [node.query]
    if isinstance(node, ast.SelectStmt):
        _new_table(getattr(node.intoClause, "rel", None), is_resource)
        query = copy.copy(node)
        query.intoClause = None
        return [query]
    names: list[tuple[str | None, str]] = []
    if isinstance(node, ast.DropStmt):
        for obj in node.objects or ():
            parts = [str(s.sval) for s in obj]
            names.append((parts[-2] if len(parts) > 1 else None, parts[-1]))
    else:  # TRUNCATE
        names = [(rv.schemaname, rv.relname) for rv in node.relations or ()]
    for schema, name in names:
        if schema not in (None, "pg_temp") or not is_temp(name):
            raise errors.InsufficientPrivilege(
                f'{statement_name(node)} is not allowed on "{name}": only the session\'s '
                "own temporary tables can be dropped or truncated", hint=f"{TEMP_HINT} {DISCOVER}")
    return []
