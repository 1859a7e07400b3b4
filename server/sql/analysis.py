"""Statement analysis: a pglast tree in, a frozen plan out. No I/O.

The plan names every resource reference in every scope (FROM and JOIN items,
subqueries anywhere, CTE bodies, set operations, the source of INSERT…SELECT,
the target of a write) and the arguments pushed down to each.

Pushdown rules, which keep every answer correct because Postgres re-applies each
predicate to the rows afterwards:
- Only top-level AND-ed conjuncts of WHERE bind, and of JOIN … ON on the side
  the join filters (both sides of an inner join, the nullable side of an outer
  one, neither side of a full join).
- A conjunct binds one reference: ``col = v``, ``v = col``, ``col IN (v, …)``,
  ``col = ANY(v)`` and ``col IN (SELECT …)``, where ``col`` is a declared column
  of that reference, named unambiguously (qualified by its alias, or
  unqualified and declared by no other resource of the scope).
- A value ``v`` references no column of the statement: a literal, a ``$n``, a
  cast or an expression over those, or an uncorrelated subquery.
- A name that a visible CTE defines is the CTE, never a resource.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pglast import ast, enums, parser
from pglast.stream import RawStream

__all__ = [
    "Plan",
    "Predicate",
    "Reference",
    "Value",
    "analyze",
    "deparse",
    "param_numbers",
    "renumber_params",
]

Lookup = Callable[[str | None, str], Any]  # (schema, name) -> Resource | None

_NO_CONST = object()


@dataclass(frozen=True, slots=True)
class Value:
    """One pushed-down value expression."""

    sql: str
    node: Any = field(compare=False, repr=False)
    const: Any = field(default=_NO_CONST, compare=False, repr=False)
    param: int | None = None
    is_set: bool = False  # IN (SELECT …) and = ANY(array): a set of values
    has_subquery: bool = False

    @property
    def is_const(self) -> bool:
        return self.const is not _NO_CONST


@dataclass(frozen=True, slots=True)
class Predicate:
    """``column`` equals one of ``values`` (an IN list has several)."""

    column: str
    values: tuple[Value, ...]


@dataclass(slots=True)
class Reference:
    """One mention of a resource in a statement."""

    id: int
    schema: str | None
    name: str
    alias: str
    has_alias: bool
    span: tuple[int, int]  # the relation name's [start, end) in the statement text
    access: str = "read"  # "read" or "write"
    predicates: list[Predicate] = field(default_factory=list)
    # Conjuncts naming this reference's columns that did not bind: (column, their SQL).
    unbound: list[tuple[str, str]] = field(default_factory=list)
    resource: Any = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.name if self.alias == self.name else f"{self.name} AS {self.alias}"


@dataclass(frozen=True, slots=True)
class Plan:
    """What a statement reads and writes, and where its text may be rewritten."""

    sql: str
    node: Any = field(repr=False)
    references: tuple[Reference, ...]
    target: Reference | None
    with_insert_at: int | None  # after "WITH [RECURSIVE]", when the statement has one
    max_param: int
    returning_span: tuple[int, int] | None
    set_columns: tuple[str, ...] = ()
    set_values: tuple[Value | None, ...] = ()  # None: the SET expression reads the row
    where_fully_bound: bool = True  # every WHERE conjunct bound the target
    has_from: bool = False  # UPDATE … FROM / DELETE … USING
    # A subquery, LATERAL item or recursive CTE may run more than once per statement:
    # a reference read there is materialized once rather than rebuilt on every run.
    rescans: bool = False
    reads: tuple[Reference, ...] = field(init=False, repr=False)  # the read references

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads",
                           tuple(r for r in self.references if r.access == "read"))

    @property
    def is_insert(self) -> bool:
        return isinstance(self.node, ast.InsertStmt)


class _Scope:
    __slots__ = ("ctes", "names", "parent", "refs")

    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.refs: list[Reference] = []
        self.ctes: set[str] = set()
        self.names: set[str] = set()  # every relation name or alias in this FROM

    def has_cte(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.ctes:
                return True
            scope = scope.parent
        return False

    def all_refs(self) -> Iterator[Reference]:
        scope: _Scope | None = self
        while scope is not None:
            yield from scope.refs
            scope = scope.parent


def deparse(node: Any) -> str:
    return RawStream()(node)


def _walk(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple | list):
        for item in node:
            yield from _walk(item)
    elif isinstance(node, ast.Node):
        yield node
        for name in node.__slots__:
            yield from _walk(getattr(node, name, None))


def _may_rescan(node: Any) -> bool:
    for n in _walk(node):
        if isinstance(n, ast.SubLink) or (isinstance(n, ast.WithClause) and n.recursive) or (
                isinstance(n, ast.RangeSubselect | ast.RangeFunction) and n.lateral):
            return True
    return False


def param_numbers(node: Any) -> set[int]:
    return {n.number for n in _walk(node) if isinstance(n, ast.ParamRef)}


def renumber_params(node: Any) -> tuple[Any, list[int]]:
    """A copy of ``node`` whose ``$n`` are renumbered 1..m; and the old numbers, in order."""
    node = copy.deepcopy(node)
    old = sorted(param_numbers(node))
    mapping = {n: i + 1 for i, n in enumerate(old)}
    for n in _walk(node):
        if isinstance(n, ast.ParamRef):
            n.number = mapping[n.number]
    return node, old


def _const_value(node: Any) -> Any:
    if isinstance(node, ast.A_Const):
        if node.isnull:
            return None
        val = node.val
        if isinstance(val, ast.Integer):
            return val.ival
        if isinstance(val, ast.Float):
            return val.fval  # kept as text: the column type decides
        if isinstance(val, ast.Boolean):
            return val.boolval
        if isinstance(val, ast.String):
            return val.sval
    return _NO_CONST


def _conjuncts(node: Any) -> list[Any]:
    if node is None:
        return []
    if isinstance(node, ast.BoolExpr) and node.boolop == enums.BoolExprType.AND_EXPR:
        out: list[Any] = []
        for arg in node.args:
            out.extend(_conjuncts(arg))
        return out
    return [node]


def _op_is(node: Any, op: str) -> bool:
    names = getattr(node, "name", None) or ()
    return len(names) >= 1 and isinstance(names[-1], ast.String) and names[-1].sval == op


class _Analyzer:
    def __init__(self, sql: str, lookup: Lookup) -> None:
        self.sql = sql
        self.lookup = lookup
        self.refs: list[Reference] = []
        self._tokens = parser.scan(sql) if sql else []

    # -- text spans -----------------------------------------------------------

    def _token_index(self, location: int) -> int:
        for i, tok in enumerate(self._tokens):
            if tok.start >= location:
                return i
        return len(self._tokens)

    def name_span(self, location: int) -> tuple[int, int]:
        """The span of a possibly qualified relation name starting at ``location``."""
        i = self._token_index(location)
        end = location
        while i < len(self._tokens):
            tok = self._tokens[i]
            end = tok.end + 1
            nxt = self._tokens[i + 1] if i + 1 < len(self._tokens) else None
            if nxt is not None and nxt.name == "ASCII_46":  # "."
                i += 2
                continue
            break
        return location, end

    def with_insert_point(self, with_clause: Any) -> int:
        i = self._token_index(with_clause.location)
        end = self._tokens[i].end + 1
        if i + 1 < len(self._tokens) and self._tokens[i + 1].name == "RECURSIVE":
            end = self._tokens[i + 1].end + 1
        return end

    def returning_span(self) -> tuple[int, int] | None:
        for tok in reversed(self._tokens):
            if tok.name == "RETURNING":
                return tok.start, len(self.sql.rstrip().rstrip(";").rstrip())
        return None

    # -- references -----------------------------------------------------------

    def add_ref(self, rv: ast.RangeVar, scope: _Scope, access: str) -> Reference | None:
        if rv.schemaname is None and scope.has_cte(rv.relname):
            scope.names.add(rv.relname)
            return None
        alias = rv.alias.aliasname if rv.alias else rv.relname
        scope.names.add(alias)
        resource = self.lookup(rv.schemaname, rv.relname)
        if resource is None:
            return None
        ref = Reference(
            id=len(self.refs),
            schema=rv.schemaname,
            name=rv.relname,
            alias=alias,
            has_alias=rv.alias is not None,
            span=self.name_span(rv.location),
            access=access,
            resource=resource,
        )
        self.refs.append(ref)
        scope.refs.append(ref)
        return ref

    # -- walking --------------------------------------------------------------

    def visit(self, node: Any, scope: _Scope) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, scope)
        elif isinstance(node, ast.SelectStmt):
            self.select(node, scope)
        elif isinstance(node, ast.Node):
            for name in node.__slots__:
                self.visit(getattr(node, name, None), scope)

    def with_clause(self, with_clause: Any, scope: _Scope) -> None:
        if with_clause is None:
            return
        for cte in with_clause.ctes:
            scope.ctes.add(cte.ctename)
        for cte in with_clause.ctes:
            self.visit(cte.ctequery, scope)

    def select(self, node: ast.SelectStmt, parent: _Scope) -> _Scope:
        scope = _Scope(parent)
        self.with_clause(node.withClause, scope)
        if node.op != enums.SetOperation.SETOP_NONE:
            self.visit((node.larg, node.rarg, node.sortClause, node.limitCount,
                        node.limitOffset), scope)
            return scope
        for item in node.fromClause or ():
            self.from_item(item, scope)
        self.where(node.whereClause, scope, scope.refs)
        self.visit((node.targetList, node.groupClause, node.havingClause, node.sortClause,
                    node.limitCount, node.limitOffset, node.windowClause,
                    node.distinctClause, node.valuesLists), scope)
        return scope

    def from_item(self, item: Any, scope: _Scope) -> list[Reference]:
        if isinstance(item, ast.RangeVar):
            ref = self.add_ref(item, scope, "read")
            return [ref] if ref else []
        if isinstance(item, ast.JoinExpr):
            left = self.from_item(item.larg, scope)
            right = self.from_item(item.rarg, scope)
            if item.alias is not None:
                scope.names.add(item.alias.aliasname)
            kind = item.jointype
            targets = {
                enums.JoinType.JOIN_INNER: left + right,
                enums.JoinType.JOIN_LEFT: right,
                enums.JoinType.JOIN_RIGHT: left,
            }.get(kind, [])
            self.where(item.quals, scope, targets)
            return left + right
        if isinstance(item, ast.RangeSubselect):
            if item.alias is not None:
                scope.names.add(item.alias.aliasname)
            self.visit(item.subquery, scope)
            return []
        if isinstance(item, ast.RangeFunction) and item.alias is not None:
            scope.names.add(item.alias.aliasname)
        self.visit(item, scope)
        return []

    def where(self, clause: Any, scope: _Scope, targets: list[Reference]) -> int:
        """Visit a WHERE/ON clause and bind its conjuncts; returns how many did not bind."""
        unbound = 0
        for conj in _conjuncts(clause):
            self.visit(conj, scope)
            if not self.bind(conj, scope, targets):
                unbound += 1
                self.note_unbound(conj, scope)
        return unbound

    def note_unbound(self, conj: Any, scope: _Scope) -> None:
        """Remember a conjunct that names a reference's column but binds nothing
        (``LIKE``, ``<>``, ``OR``…): a missing-key error shows it."""
        text = None
        for n in _walk(conj):
            hit = self.resolve_column(n, scope)
            if hit is not None:
                text = text or deparse(conj)
                if (hit[1], text) not in hit[0].unbound:
                    hit[0].unbound.append((hit[1], text))

    # -- binding --------------------------------------------------------------

    def resolve_column(self, col: Any, scope: _Scope) -> tuple[Reference, str] | None:
        if not isinstance(col, ast.ColumnRef):
            return None
        fields = col.fields
        if not all(isinstance(f, ast.String) for f in fields):
            return None
        names = [f.sval for f in fields]
        if len(names) == 1:
            owners = [r for r in scope.refs if r.resource.column(names[0]) is not None]
            return (owners[0], names[0]) if len(owners) == 1 else None
        if len(names) == 2:
            for ref in scope.refs:
                if ref.alias == names[0] and ref.resource.column(names[1]) is not None:
                    return ref, names[1]
        if len(names) == 3:
            for ref in scope.refs:
                if (not ref.has_alias and ref.name == names[1] and ref.schema == names[0]
                        and ref.resource.column(names[2]) is not None):
                    return ref, names[2]
        return None

    def bind(self, conj: Any, scope: _Scope, targets: list[Reference]) -> bool:
        found = self.predicate(conj, scope)
        if found is None:
            return False
        ref, pred = found
        if ref not in targets:
            return False
        ref.predicates.append(pred)
        return True

    def predicate(self, conj: Any, scope: _Scope) -> tuple[Reference, Predicate] | None:
        if isinstance(conj, ast.A_Expr) and _op_is(conj, "="):
            kind = conj.kind
            if kind == enums.A_Expr_Kind.AEXPR_OP:
                for col, val in ((conj.lexpr, conj.rexpr), (conj.rexpr, conj.lexpr)):
                    hit = self.resolve_column(col, scope)
                    value = self.value(val, scope) if hit else None
                    if hit and value:
                        return hit[0], Predicate(hit[1], (value,))
                return None
            if kind == enums.A_Expr_Kind.AEXPR_IN:
                hit = self.resolve_column(conj.lexpr, scope)
                values = [self.value(v, scope) for v in conj.rexpr or ()]
                if hit and values and all(values):
                    return hit[0], Predicate(hit[1], tuple(values))  # type: ignore[arg-type]
                return None
            if kind == enums.A_Expr_Kind.AEXPR_OP_ANY:
                hit = self.resolve_column(conj.lexpr, scope)
                value = self.value(conj.rexpr, scope, is_set=True) if hit else None
                if hit and value:
                    return hit[0], Predicate(hit[1], (value,))
            return None
        if (isinstance(conj, ast.SubLink) and conj.subLinkType == enums.SubLinkType.ANY_SUBLINK
                and (not conj.operName or _op_is(ast.A_Expr(name=conj.operName), "="))):
            hit = self.resolve_column(conj.testexpr, scope)
            if hit and self.uncorrelated(conj.subselect, scope):
                sql = deparse(conj.subselect)
                return hit[0], Predicate(
                    hit[1], (Value(sql, conj.subselect, is_set=True, has_subquery=True),)
                )
        return None

    def value(self, node: Any, scope: _Scope, is_set: bool = False) -> Value | None:
        """``node`` as a pushdown value, or None when it reads the statement's rows."""
        if not self.is_value(node, scope):
            return None
        const = _const_value(node)
        param = node.number if isinstance(node, ast.ParamRef) else None
        has_sub = any(isinstance(n, ast.SubLink) for n in _walk(node))
        return Value(deparse(node), node, const, param, is_set, has_sub)

    def is_value(self, node: Any, scope: _Scope) -> bool:
        if isinstance(node, ast.A_Const | ast.ParamRef | ast.SQLValueFunction):
            return True
        if isinstance(node, ast.TypeCast):
            return self.is_value(node.arg, scope)
        if isinstance(node, ast.A_Expr):
            return all(self.is_value(x, scope) for x in (node.lexpr, node.rexpr) if x is not None)
        if isinstance(node, ast.FuncCall):
            return node.over is None and not node.agg_star and all(
                self.is_value(a.arg if isinstance(a, ast.NamedArgExpr) else a, scope)
                for a in node.args or ()
            )
        if isinstance(node, ast.A_ArrayExpr):
            return all(self.is_value(e, scope) for e in node.elements or ())
        if isinstance(node, ast.SubLink):
            return node.subLinkType in (
                enums.SubLinkType.EXPR_SUBLINK, enums.SubLinkType.ARRAY_SUBLINK
            ) and self.uncorrelated(node.subselect, scope)
        return False

    def uncorrelated(self, subselect: Any, scope: _Scope) -> bool:
        """Whether a subquery can be evaluated on its own, before the statement runs."""
        inner_names: set[str] = set()
        inner_resources: list[Any] = []
        opaque = False  # an inner relation whose columns are unknown here
        for n in _walk(subselect):
            if isinstance(n, ast.RangeVar):
                if n.schemaname is None and scope.has_cte(n.relname):
                    return False  # reads a CTE of the enclosing statement
                inner_names.add(n.alias.aliasname if n.alias else n.relname)
                resource = self.lookup(n.schemaname, n.relname)
                if resource is None:
                    opaque = True
                else:
                    inner_resources.append(resource)
            elif isinstance(n, ast.RangeSubselect | ast.RangeFunction | ast.JoinExpr):
                opaque = True
                if n.alias is not None:
                    inner_names.add(n.alias.aliasname)
            elif isinstance(n, ast.CommonTableExpr):
                inner_names.add(n.ctename)
                opaque = True
        outer_cols = {c.name for r in scope.all_refs() for c in r.resource.columns}
        for n in _walk(subselect):
            if not isinstance(n, ast.ColumnRef):
                continue
            fields = [f.sval for f in n.fields if isinstance(f, ast.String)]
            if len(fields) >= 2:
                if fields[-2] not in inner_names:
                    return False
            elif fields and fields[0] in outer_cols and not opaque and not any(
                r.column(fields[0]) is not None for r in inner_resources
            ):
                return False
        return True


def analyze(sql: str, node: Any, lookup: Lookup) -> Plan:
    """The plan of one parsed statement (``node`` is the RawStmt's ``stmt``)."""
    a = _Analyzer(sql, lookup)
    root = _Scope(None)
    target: Reference | None = None
    with_at = None
    with_clause = getattr(node, "withClause", None)
    if with_clause is not None:
        with_at = a.with_insert_point(with_clause)
    set_columns: tuple[str, ...] = ()
    set_values: tuple[Value | None, ...] = ()
    fully_bound = True
    has_from = False
    returning = None

    if isinstance(node, ast.SelectStmt):
        a.select(node, root)
    elif isinstance(node, ast.InsertStmt):
        a.with_clause(with_clause, root)
        target = a.add_ref(node.relation, root, "write")
        root.refs.clear()  # the target is written, never read, by an INSERT
        a.visit(node.selectStmt, root)
        returning = a.returning_span() if node.returningClause else None
    elif isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
        a.with_clause(with_clause, root)
        target = a.add_ref(node.relation, root, "write")
        extra = node.fromClause if isinstance(node, ast.UpdateStmt) else node.usingClause
        has_from = bool(extra)
        for item in extra or ():
            a.from_item(item, root)
        unbound = a.where(node.whereClause, root, root.refs)
        fully_bound = unbound == 0 and not has_from
        if isinstance(node, ast.UpdateStmt):
            cols, vals = [], []
            for res in node.targetList:
                cols.append(res.name if not res.indirection else "")
                v = a.value(res.val, root) if not isinstance(res.val, ast.MultiAssignRef) else None
                vals.append(v)
                a.visit(res.val, root)
            set_columns, set_values = tuple(cols), tuple(vals)
        returning = a.returning_span() if node.returningClause else None
    else:
        a.visit(node, root)

    params = param_numbers(node)
    return Plan(
        rescans=_may_rescan(node),
        sql=sql,
        node=node,
        references=tuple(a.refs),
        target=target,
        with_insert_at=with_at,
        max_param=max(params, default=0),
        returning_span=returning,
        set_columns=set_columns,
        set_values=set_values,
        where_fully_bound=fully_bound,
        has_from=has_from,
    )
