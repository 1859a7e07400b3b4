"""The gate: layer 1 of the sandbox. A pglast tree in; a refusal, or nothing. No I/O.

Every statement a client sends is judged here, on its parse tree, before any
tool runs or anything reaches the sidecar. It is the only judge of which
statement kinds, functions and settings are allowed: the engine runs what
passes and never re-checks it. Quoting, dollar quotes, ``U&`` escapes and
comments are resolved by the parser, so no spelling of a name escapes these
rules. Each refusal is an ``errors.SqlError`` with a real SQLSTATE and a HINT
naming the next step. What is allowed is data in other modules, applied here:
``statement_kinds``, ``allowlist`` (relations, functions), ``setting_rules`` and
``pg_settings_read`` (the one read of ``pg_settings`` allowed).

Rules:
- Statement kinds: only ``STATEMENT_KINDS`` (SELECT, INSERT, UPDATE, DELETE,
  EXPLAIN, the transaction statements, SET/RESET/SHOW, DECLARE (its query judged
  as a top-level SELECT: ``cursor_statements``), FETCH and MOVE, DISCARD,
  DEALLOCATE, CLOSE, UNLISTEN). Of those, refused: two-phase commit (PREPARE TRANSACTION,
  COMMIT/ROLLBACK PREPARED), SHOW ALL, SET TRANSACTION SNAPSHOT, and at any depth SELECT … INTO and
  FOR UPDATE/SHARE. Every other kind is refused with its own message,
  SQL-level PREPARE and EXECUTE among them (0A000: the driver's prepared
  statements, over the extended protocol, are the way).
- A relation, wherever it is named (FROM, JOIN, LATERAL, subqueries, CTE
  bodies, the target and USING/FROM of a write), is one of: a resource
  (``is_resource(schema, name)``); a CTE visible at that point (an unqualified
  name: earlier siblings of a plain WITH, every sibling of WITH RECURSIVE, the
  CTEs of enclosing queries); a relation of ``information_schema`` (but its
  user-mapping and foreign-server-option views); or one of the ``pg_catalog``
  relations in ``CATALOG_RELATIONS``. An unqualified ``pg_…`` name is a
  ``pg_catalog`` one, as Postgres resolves it. Only resources may be written,
  and never by INSERT … ON CONFLICT (a temporary table may: it is Postgres's).
  ``pg_settings`` is readable only by a top-level SELECT of plain columns whose
  WHERE is exactly ``name = '…'`` (or ``name IN ('…', …)``) naming no secret
  setting: what pgjdbc sends; nothing else of it can be evaluated.
- A function, wherever it is called (including FROM, ORDER BY, attribute
  notation ``x.f`` and ``(expr).f``, which Postgres reads as ``f(x)``), is one
  of ``FUNCTIONS``, an ``information_schema`` helper, a served ``fn.<name>``,
  or ``scratchpad.search`` (``own_function``); the refused families each say
  why, any other name is undefined (42883); ``scratchpad.restage`` only alone
  (``system_call``).
- Settings: ``set_config(name, value, is_local)`` is judged exactly as
  ``SET name = value`` (protected names, one-way values), and is refused for
  the settings the session keeps itself (``statement_timeout`` …: SET them);
  ``current_setting(name)`` as ``SHOW name``. Both need a setting name known
  here: a literal, or a ``$n`` whose text value is given; so does a one-way
  setting's value. Judged before the values are known (``values_later``, at
  Describe), such a ``$n`` is left to the judgement made with them. See
  ``setting_rules``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pglast import ast, enums

from glove_scratchpad import errors
from glove_scratchpad.names import DEFAULT_SCHEMAS, Schemas

from .allowlist import (
    CATALOG_RELATIONS,
    CHECKED_FUNCTIONS,
    DISCOVER,
    FUNCTIONS,
    INFO_SCHEMA_REFUSED,
    SYSTEM_FUNCTIONS,
    backend_call,
    refuse_catalog,
    refuse_function,
    refuse_system_function,
    system_call,
    undefined_function,
    undefined_relation,
)
from .copy import judged_as
from .cursor_statements import check_current_of, check_declare
from .nodes import SET_CONFIG_PARAMS, call_arguments
from .own_functions import own_function
from .pg_settings_read import literal, pinned_settings_read
from .scopes import CteScope
from .setting_rules import (
    ONE_WAY_SETTINGS,
    PROTECTED_SETTINGS,
    SECRET_SETTINGS,
    SESSION_SETTINGS,
    canonical_setting,
    one_way,
    refuse_secret,
    refuse_set,
    refuse_set_config,
    setting_protected,
)
from .statement_kinds import STATEMENT_KINDS, refuse_statement

__all__ = [
    "CATALOG_RELATIONS",
    "FUNCTIONS",
    "PROTECTED_SETTINGS",
    "SECRET_SETTINGS",
    "STATEMENT_KINDS",
    "IsFunction",
    "IsResource",
    "check",
]

IsResource = Callable[[str | None, str], bool]
IsFunction = Callable[[str, str], bool]  # (schema, name): a served function (fn.<name>)

_WRITES = (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)
_TABLESAMPLE_METHODS = (["system"], ["bernoulli"], ["pg_catalog", "system"],
                        ["pg_catalog", "bernoulli"])


def check(
    node: Any,
    *,
    is_resource: IsResource,
    params: Sequence[str | bytes | None] | None = None,
    protected_settings: frozenset[str] = PROTECTED_SETTINGS,
    secret_settings: frozenset[str] = SECRET_SETTINGS,
    is_function: IsFunction | None = None,
    values_later: bool = False,
    schemas: Schemas = DEFAULT_SCHEMAS,
    is_temp: Callable[[str], bool] | None = None,
) -> None:
    """Refuse ``node`` (a RawStmt's ``stmt``) with an ``errors.SqlError``, or return None.

    ``is_resource(schema, name)`` says whether a relation names a resource;
    ``schema`` is None for an unqualified name. ``params`` are the statement's
    parameter values when it is about to run: ``str`` for a text-format value,
    None for NULL, ``bytes`` for a binary-format one (not read). A setting name
    given as ``$n`` (SQLAlchemy's ``current_setting($1)``) is checked against its
    text, and refused when there is none. ``is_function(schema, name)`` says whether
    ``fn.<name>`` is a served function (by default none is). ``values_later``: the
    parameter values are not known yet (a Describe); a check that needs them is left
    to the judgement made when they are. ``schemas``: the server's (system, functions).
    ``is_temp(name)``: whether a name that ``is_resource`` admits is one of the
    session's temporary tables, which are Postgres's own (ON CONFLICT allowed).
    """
    _Gate(is_resource, protected_settings, secret_settings, params, is_function,
          values_later, schemas, is_temp).statement(judged_as(node, is_resource))


class _Gate:
    """One judgement: walks a statement's tree, raising at the first refusal."""

    def __init__(self, is_resource: IsResource, protected: frozenset[str],
                 secret: frozenset[str], params: Sequence[str | bytes | None] | None,
                 is_function: IsFunction | None = None, values_later: bool = False,
                 schemas: Schemas = DEFAULT_SCHEMAS,
                 is_temp: Callable[[str], bool] | None = None) -> None:
        self.is_resource, self.schemas = is_resource, schemas
        self.system, self.fns = schemas.system, schemas.fns
        self.is_function = is_function or (lambda schema, name: False)
        self.protected = protected
        self.secret = secret
        self.params = params
        self.settings_read: Any = None  # the one pg_settings RangeVar a pinned read may name
        self.values_later = values_later  # parameter values come later: judged again then
        self.is_temp = is_temp or (lambda name: False)

    # -- statements -----------------------------------------------------------------

    def statement(self, node: Any, top: bool = True) -> None:
        if not isinstance(node, STATEMENT_KINDS):
            refuse_statement(node)
        if isinstance(node, ast.SelectStmt):
            if system_call(node, self.system) is not None or backend_call(node) is not None:
                return  # SELECT scratchpad.restage(txid) alone: system_call judged it
            if top:
                self.settings_read = pinned_settings_read(node, self.secret)
            self.select(node, CteScope(None))
        elif isinstance(node, _WRITES):
            self.write(node, CteScope(None))
        elif isinstance(node, ast.ExplainStmt):
            self.explain(node, top)
        elif isinstance(node, ast.TransactionStmt):
            self.transaction(node)
        elif isinstance(node, ast.VariableSetStmt):
            self.set(node)
        elif isinstance(node, ast.VariableShowStmt):
            self.show(str(node.name))
        elif isinstance(node, ast.DeclareCursorStmt):
            self.statement(check_declare(node), top)
        # FETCH, MOVE, DISCARD, DEALLOCATE, CLOSE and UNLISTEN name nothing to check.

    def explain(self, node: Any, top: bool) -> None:
        if system_call(node.query, self.system) is not None:
            refuse_system_function("EXPLAIN of ", self.system)
        self.statement(node.query, top)  # EXPLAIN EXECUTE, … CREATE TABLE AS: refused there

    def transaction(self, node: Any) -> None:
        k = enums.TransactionStmtKind
        if node.kind == k.TRANS_STMT_PREPARE:
            raise errors.FeatureNotSupported(
                "PREPARE TRANSACTION is not supported: transactions here are virtual",
                hint="A transaction here stages writes: COMMIT fires them in order, ROLLBACK "
                "discards them all.")
        if node.kind in (k.TRANS_STMT_COMMIT_PREPARED, k.TRANS_STMT_ROLLBACK_PREPARED):
            raise errors.FeatureNotSupported(
                "two-phase commit is not supported: transactions here are virtual",
                hint="COMMIT or ROLLBACK the open transaction instead.")

    # -- settings -------------------------------------------------------------------

    def set(self, node: Any) -> None:
        """SET, RESET, SET … TO DEFAULT, SET … FROM CURRENT."""
        kind = node.kind
        k = enums.VariableSetKind
        if kind == k.VAR_RESET_ALL:
            return
        if kind == k.VAR_SET_MULTI:
            if node.name == "TRANSACTION SNAPSHOT":
                raise errors.FeatureNotSupported(
                    "SET TRANSACTION SNAPSHOT is not supported: transactions here are virtual",
                    hint="Drop it; each statement reads the resources afresh.")
            return  # SET TRANSACTION …, SET SESSION CHARACTERISTICS: kept by the session
        name = canonical_setting(node.name)
        if kind == k.VAR_SET_VALUE:
            texts = [literal(a) for a in node.args or ()]
            value = None if None in texts else ", ".join(t for t in texts if t is not None)
            self.set_value(name, value)
        elif name not in ONE_WAY_SETTINGS and setting_protected(name, self.protected):
            refuse_set(name)  # RESET, TO DEFAULT or FROM CURRENT of a protected one

    def set_value(self, name: str, value: str | None) -> None:
        """``SET name = value``, however spelled; ``value`` is None when not known here."""
        if name in ONE_WAY_SETTINGS:
            why = ("its value must be a literal" if value is None
                   else one_way(name, value, self.schemas))
            if why:
                refuse_set(name, why)
        elif setting_protected(name, self.protected):
            refuse_set(name)

    def show(self, name: str) -> None:
        """``SHOW name``, however spelled."""
        name = canonical_setting(name)
        if name == "all":
            raise errors.InsufficientPrivilege(
                "SHOW ALL is not allowed: some settings hold the server's file paths",
                hint="SHOW one setting by name, e.g. SHOW TimeZone.")
        if name in self.secret:
            refuse_secret(name)

    def setting_function(self, name: str, fc: Any) -> None:
        """``set_config`` as SET, ``current_setting`` as SHOW, on arguments known here."""
        args = call_arguments(fc, SET_CONFIG_PARAMS if name == "set_config"
                              else ("setting_name", "missing_ok"))
        known, setting = self.argument(args.get("setting_name"))
        if not known and self.later(args.get("setting_name")):
            return  # judged with the value, at Execute
        if not known:
            raise errors.InsufficientPrivilege(
                f"{name}() needs a literal setting name here",
                hint=f"Write {name}('name', …) with the setting's name as a string literal.")
        if setting is None:
            return  # NULL: current_setting gives NULL, set_config refuses it
        setting = canonical_setting(setting)
        if name == "current_setting":
            if setting in self.secret:
                refuse_secret(setting)
            return
        value = args.get("new_value")
        if not (setting in ONE_WAY_SETTINGS and self.later(value)):  # else judged at Execute
            self.set_value(setting, self.argument(value)[1])
        if setting in SESSION_SETTINGS:
            refuse_set_config(setting)

    def later(self, node: Any) -> bool:
        """Whether ``node`` is a ``$n`` whose value comes later (``values_later``)."""
        while isinstance(node, ast.TypeCast):
            node = node.arg
        return self.values_later and isinstance(node, ast.ParamRef)

    def argument(self, node: Any) -> tuple[bool, str | None]:
        """(whether its value is known here, its text): a literal, or a ``$n`` with a value."""
        while isinstance(node, ast.TypeCast):
            node = node.arg
        if isinstance(node, ast.ParamRef):
            number = int(node.number or 0)
            if self.params is None or not 1 <= number <= len(self.params):
                return False, None
            value = self.params[number - 1]
            return (True, value) if value is None or isinstance(value, str) else (False, None)
        if isinstance(node, ast.A_Const) and node.isnull:
            return True, None
        text = literal(node)
        return text is not None, text

    # -- queries --------------------------------------------------------------------

    def write(self, node: Any, scope: CteScope) -> None:
        check_current_of(getattr(node, "whereClause", None))
        inner = self.with_clause(node.withClause, scope)
        try:
            self.target(node.relation)
        except errors.SqlError as exc:
            _locate(exc, node.relation)
            raise
        for slot in node.__slots__:
            if slot not in ("withClause", "relation"):
                self.visit(getattr(node, slot, None), inner)
        rel = node.relation
        if isinstance(node, ast.InsertStmt) and node.onConflictClause is not None and not (
                rel.schemaname is None and self.is_temp(rel.relname)):
            raise errors.FeatureNotSupported(
                "INSERT … ON CONFLICT is not supported on resources",
                hint="Read first, then INSERT only what is new.")

    def select(self, node: Any, scope: CteScope) -> None:
        if node.intoClause is not None:
            raise errors.InsufficientPrivilege(
                "SELECT … INTO is not allowed: it creates a table",
                hint="Drop INTO …; use a CTE (WITH name AS (SELECT …)) for intermediate results.")
        if node.lockingClause:
            raise errors.FeatureNotSupported(
                "SELECT … FOR UPDATE/SHARE is not supported: resources have no row locks",
                hint="Drop the FOR UPDATE/SHARE clause; inside BEGIN … COMMIT writes are "
                "staged, and COMMIT fires them in order.")
        inner = self.with_clause(node.withClause, scope)
        for slot in node.__slots__:
            if slot != "withClause":
                self.visit(getattr(node, slot, None), inner)

    def with_clause(self, clause: Any, scope: CteScope) -> CteScope:
        if clause is None:
            return scope
        names = [cte.ctename for cte in clause.ctes]
        for i, cte in enumerate(clause.ctes):
            # A plain WITH sees its earlier siblings; WITH RECURSIVE sees them all.
            visible = names if clause.recursive else names[:i]
            body_scope = CteScope(scope, visible)
            body = cte.ctequery
            if isinstance(body, ast.SelectStmt):
                self.select(body, body_scope)
            elif isinstance(body, _WRITES):
                self.write(body, body_scope)
            else:
                refuse_statement(body)  # MERGE … RETURNING
            self.visit((cte.search_clause, cte.cycle_clause), body_scope)
        return CteScope(scope, names)

    # -- nodes ----------------------------------------------------------------------

    def visit(self, node: Any, scope: CteScope) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, scope)
            return
        if not isinstance(node, ast.Node):
            return
        n: Any = node  # pglast's field types are loose; read them as Any
        if isinstance(n, ast.SelectStmt):  # a subquery (a write nests only in WITH)
            self.select(n, scope)
            return
        try:
            if isinstance(n, ast.RangeVar):
                self.relation(n, scope)
                return
            self.expression(n)
        except errors.SqlError as exc:
            _locate(exc, n)
            raise
        for slot in n.__slots__:
            self.visit(getattr(n, slot, None), scope)

    def expression(self, n: Any) -> None:
        """The node's own check: a function call, spelled or in attribute notation."""
        if isinstance(n, ast.FuncCall):
            self.function(n)
        elif isinstance(n, ast.ColumnRef):
            # x.f is f(x) when x has no column f (with 3 or 4 names, only the last).
            fields = n.fields or ()
            if len(fields) >= 2 and isinstance(fields[-1], ast.String):
                self.attribute(str(fields[-1].sval))
        elif isinstance(n, ast.A_Indirection):
            for name in _names(n.indirection):  # (expr).f is f(expr)
                self.attribute(name)
        elif isinstance(n, ast.RangeTableSample):
            method = _names(n.method)
            if method not in _TABLESAMPLE_METHODS:
                raise errors.UndefinedFunction(
                    f'tablesample method {".".join(method)} does not exist',
                    hint="Use TABLESAMPLE SYSTEM (percent) or BERNOULLI (percent).")
        elif type(n).__name__.endswith("Stmt"):
            refuse_statement(n)  # no other statement nests in the ones allowed

    def relation(self, rv: Any, scope: CteScope) -> None:
        if rv is self.settings_read:
            return
        schema, name = rv.schemaname, rv.relname
        if rv.catalogname is not None:
            raise errors.FeatureNotSupported(
                f'cross-database references are not implemented: "{rv.catalogname}.'
                f'{schema}.{name}"', hint="Name the relation without its database.")
        if schema is None:
            if scope.has_cte(name) or name in CATALOG_RELATIONS:
                return
            if self.is_resource(None, name):  # a resource, or a catalog view the engine
                return                        # answers itself (pg_cursors)
            if name.startswith("pg_"):
                refuse_catalog(name)
            undefined_relation(name, f"{self.system}.{name}"
                               if self.is_resource(self.system, name) else None)
        if schema == "pg_catalog":
            if name not in CATALOG_RELATIONS and not self.is_resource(schema, name):
                refuse_catalog(name)
            return
        if schema == "information_schema":
            if name in INFO_SCHEMA_REFUSED:
                raise errors.InsufficientPrivilege(
                    f'permission denied for view information_schema.{name}: it shows '
                    "connection options of other servers",
                    hint="Read information_schema.tables and .columns to describe resources.")
            return
        if self.is_resource(schema, name):
            return
        if schema.startswith("pg_"):
            refuse_catalog(f"{schema}.{name}")
        undefined_relation(f"{schema}.{name}")

    def target(self, rv: Any) -> None:
        """The relation a write changes: only a resource (Postgres never takes a CTE here)."""
        schema, name = rv.schemaname, rv.relname
        shown = name if schema is None else f"{schema}.{name}"
        if rv.catalogname is not None:
            self.relation(rv, CteScope(None))
        if (schema is None and name.startswith("pg_")) or schema == "information_schema" or (
                schema is not None and schema.startswith("pg_")):
            raise errors.InsufficientPrivilege(
                f"permission denied for relation {shown}: only resources can be written",
                hint=DISCOVER)
        if not self.is_resource(schema, name):
            undefined_relation(shown)

    def function(self, fc: Any) -> None:
        parts = _names(fc.funcname)
        name = parts[-1]
        shown = ".".join(parts)
        schema = parts[-2] if len(parts) >= 2 else None
        if len(parts) > 2:
            raise errors.FeatureNotSupported(
                f"cross-database references are not implemented: {shown}",
                hint="Call the function without a database name.")
        if own_function(schema, name, self.system):
            return
        if schema == self.system and name in SYSTEM_FUNCTIONS:
            refuse_system_function(schema=self.system)
        if schema == self.fns or (schema is None and name not in FUNCTIONS
                                  and self.is_function(self.fns, name)):
            self.served_function(name, schema)
            return
        if schema not in (None, "pg_catalog"):
            undefined_function(shown)
        refuse_function(name)
        if name not in FUNCTIONS:
            undefined_function(shown)
        if name in CHECKED_FUNCTIONS:
            self.setting_function(name, fc)

    def served_function(self, name: str, schema: str | None) -> None:
        """``fn.<name>``: a served function, or 42883 saying how to list them."""
        fns = self.fns
        if schema is None:
            raise errors.UndefinedFunction(
                f"function {name}() does not exist",
                hint=f"Functions are in schema {fns}: call {fns}.{name}(…).")
        if not self.is_function(fns, name):
            raise errors.UndefinedFunction(
                f"function {fns}.{name}() does not exist",
                hint=f"\\df {fns}.* lists the functions (\\df+ with their arguments), "
                f"as does SELECT routine_name FROM information_schema.routines WHERE "
                f"routine_schema = '{fns}'.")

    def attribute(self, name: str) -> None:
        """``x.name`` and ``(expr).name``: Postgres calls ``name(x)`` when x has no such column."""
        refuse_function(name)
        if name in CHECKED_FUNCTIONS or (name.startswith("pg_") and name not in FUNCTIONS):
            raise errors.InsufficientPrivilege(
                f'"{name}" cannot be used in attribute notation here',
                hint=f"Call it as {name}(…) with literal arguments, or rename the column.")


def _names(strings: Any) -> list[str]:
    return [str(s.sval) for s in strings or () if isinstance(s, ast.String)]


def _locate(exc: errors.SqlError, node: Any) -> None:
    """Point the error at the node, as Postgres does (1-based, in characters)."""
    location = getattr(node, "location", None)
    if exc.position is None and isinstance(location, int) and location >= 0:
        exc.position = location + 1
