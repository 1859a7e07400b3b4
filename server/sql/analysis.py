"""Statement analysis: a pglast tree in, a frozen plan out. No I/O.

The plan names every resource reference in every scope (FROM and JOIN items,
subqueries anywhere, CTE bodies, set operations, the source of INSERT…SELECT,
the target of a write) and the arguments that reach each one's tool.

Rules (docs/planner.md says them at length):
- A reference's arguments are its required keys and its declared filters;
  on a write target, also its primary key. Nothing else reaches a tool, and
  Postgres applies every predicate to the rows afterwards.
- Only top-level AND-ed conjuncts bind: of WHERE, and of JOIN … ON on the side
  the join filters (both sides of an inner join, the nullable side of an outer
  one, neither side of a full join).
- A key is bound by ``=``, ``IN``, ``= ANY`` and ``IN (SELECT …)`` with a value
  (a literal, ``$n``, an expression over those, or a subquery that stands
  alone, CTEs allowed), or by an equality with another FROM item's column: a
  join, LATERAL, a correlated subquery. That item *feeds* the key
  (``feeds.py``).
- A filter takes ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``IN``, ``= ANY``,
  ``LIKE``, ``ILIKE``, ``BETWEEN`` (as ``>=`` and ``<=``), ``IS [NOT] NULL``.
- A LIMIT reaches a reference only when it applies to it alone: the one
  reference of a plain SELECT whose WHERE binds only keys and filters, with no
  ORDER BY, aggregate, DISTINCT, GROUP BY, HAVING or window.
- A name that a visible CTE defines is the CTE, never a resource.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from pglast import ast, enums

from .feeds import Feed, FeedBuilder
from .nodes import (
    Condition,
    Predicate,
    Value,
    calls_among,
    deparse,
    param_numbers,
    params_among,
    renumber_params,
    walk,
)
from .plan import Mention, Plan, Reference
from .scopes import Item, Scope, column_of, conjuncts, item_of, may_rescan
from .spans import Spans
from .temp_tables import query_of, query_start
from .values import ValueReader, aggregates, operator

__all__ = [
    "Condition",
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

# Comparison operators of a filter, as Bindings.where gives them, and their mirror.
_COMPARE = {"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_MIRROR = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_K = enums.A_Expr_Kind


class _Analyzer:
    def __init__(self, sql: str, lookup: Lookup) -> None:
        self.sql = sql
        self.lookup = lookup
        self.refs: list[Mention] = []
        self.feeds: list[Feed] = []
        self._order = itertools.count()
        self.spans = Spans(sql)
        self.values = ValueReader(lookup)
        self.value = self.values.value
        self.subquery_value = self.values.subquery_value
        self.uncorrelated = self.values.uncorrelated
        self.residue = False  # the conjunct just bound leaves conditions of its own

    # -- references -----------------------------------------------------------

    def add_item(self, alias: str, node: Any, ref: Mention | None, scope: Scope) -> None:
        scope.names.add(alias)
        scope.items[alias] = Item(alias, node, ref, scope, next(self._order))

    def add_ref(self, rv: ast.RangeVar, scope: Scope, access: str) -> Mention | None:
        alias = rv.alias.aliasname if rv.alias else rv.relname
        # The grammar requires a relation name and an alias's name; the parser sets location.
        assert rv.relname is not None and alias is not None and rv.location is not None
        if rv.schemaname is None and scope.has_cte(rv.relname):
            self.add_item(alias, rv, None, scope)
            return None
        resource = self.lookup(rv.schemaname, rv.relname)
        if resource is None:
            self.add_item(alias, rv, None, scope)
            return None
        ref = Mention(
            id=len(self.refs),
            schema=rv.schemaname,
            name=rv.relname,
            alias=alias,
            has_alias=rv.alias is not None,
            span=self.spans.name_span(rv.location),
            access=access,
            resource=resource,
        )
        self.refs.append(ref)
        scope.refs.append(ref)
        self.add_item(alias, rv, ref, scope)
        return ref

    # -- walking --------------------------------------------------------------

    def visit(self, node: Any, scope: Scope) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, scope)
        elif isinstance(node, ast.SelectStmt):
            self.select(node, scope)
        elif isinstance(node, ast.Node):
            for name in node:  # a node iterates over its __slots__
                self.visit(getattr(node, name, None), scope)

    def with_clause(self, with_clause: Any, scope: Scope) -> None:
        if with_clause is None:
            return
        recursive = bool(with_clause.recursive)
        scope.recursive = scope.recursive or recursive
        if recursive:  # every CTE of WITH RECURSIVE is visible in every body, its own too
            scope.ctes.update(cte.ctename for cte in with_clause.ctes)
        for cte in with_clause.ctes:
            # Otherwise a body sees the CTEs before it, never its own name: in
            # WITH tags AS (SELECT * FROM tags …), the inner tags is the resource.
            self.visit(cte.ctequery, scope)
            scope.ctes.add(cte.ctename)
            scope.with_nodes.append(cte)

    def select(self, node: ast.SelectStmt, parent: Scope) -> Scope:
        scope = Scope(parent)
        self.with_clause(node.withClause, scope)
        if node.op != enums.SetOperation.SETOP_NONE:
            self.visit((node.larg, node.rarg, node.sortClause, node.limitCount,
                        node.limitOffset), scope)
            return scope
        for item in node.fromClause or ():
            self.from_item(item, scope)
        scope.unbound = self.where(node.whereClause, scope, scope.refs)
        self.visit((node.targetList, node.groupClause, node.havingClause, node.sortClause,
                    node.limitCount, node.limitOffset, node.windowClause,
                    node.distinctClause, node.valuesLists), scope)
        return scope

    def from_item(self, item: Any, scope: Scope) -> list[Mention]:
        if isinstance(item, ast.RangeVar):
            ref = self.add_ref(item, scope, "read")
            return [ref] if ref else []
        if isinstance(item, ast.JoinExpr):
            left = self.from_item(item.larg, scope)
            right = self.from_item(item.rarg, scope)
            if item.alias is not None:
                scope.names.add(item.alias.aliasname)
            assert item.jointype is not None  # the parser sets every enum field
            targets = {
                enums.JoinType.JOIN_INNER: left + right,
                enums.JoinType.JOIN_LEFT: right,
                enums.JoinType.JOIN_RIGHT: left,
            }.get(item.jointype, [])
            self.where(item.quals, scope, targets)
            nullable = {
                enums.JoinType.JOIN_LEFT: right,
                enums.JoinType.JOIN_RIGHT: left,
                enums.JoinType.JOIN_FULL: left + right,
            }.get(item.jointype, [])
            scope.nullable.update(ref.id for ref in nullable)
            return left + right
        alias = getattr(item, "alias", None)
        if isinstance(item, ast.RangeSubselect | ast.RangeFunction) and alias is not None:
            self.add_item(alias.aliasname, item, None, scope)
        if isinstance(item, ast.RangeSubselect):
            self.visit(item.subquery, scope)
            return []
        self.visit(item, scope)
        return []

    def where(self, clause: Any, scope: Scope, targets: list[Mention]) -> int:
        """Visit a WHERE/ON clause and bind its conjuncts; returns how many did not bind."""
        unbound = 0
        for conj in conjuncts(clause):
            scope.conjuncts.append(conj)
            self.visit(conj, scope)
            self.note_lookup(conj, scope)
            self.residue = False
            if not self.bind(conj, scope, targets):
                unbound += 1
                self.note_unbound(conj, scope)
            elif self.residue:  # an OR that binds a key, and conditions Postgres applies
                unbound += 1
        return unbound

    def note_lookup(self, conj: Any, scope: Scope) -> None:
        """Remember the columns a conjunct looks a reference's rows up by (``lookups``)."""
        if not isinstance(conj, ast.A_Expr):
            return
        op, kind = operator(conj) or "", conj.kind
        if kind == _K.AEXPR_OP and op in _COMPARE and _COMPARE[op] != "<>":
            how = "eq" if op == "=" else "range"
        elif kind in (_K.AEXPR_IN, _K.AEXPR_OP_ANY) and op == "=":
            how = "eq"
        elif kind == _K.AEXPR_BETWEEN:
            how = "range"
        else:
            return
        for side in (conj.lexpr, conj.rexpr):
            hit = column_of(side, scope)
            if hit is not None and (hit[1], how) not in hit[0].lookups:
                hit[0].lookups.append((hit[1], how))

    def note_unbound(self, conj: Any, scope: Scope) -> None:
        """Remember a conjunct that names a reference's column but binds nothing
        (``LIKE``, ``<>``, ``OR``…): a missing-key error shows it."""
        text = None
        for n in walk(conj):
            hit = column_of(n, scope)
            if hit is not None:
                text = text or deparse(conj)
                if (hit[1], text) not in hit[0].unbound:
                    hit[0].unbound.append((hit[1], text))

    # -- binding --------------------------------------------------------------

    def bind(self, conj: Any, scope: Scope, targets: list[Mention]) -> bool:
        found = self.classify(conj, scope)
        if found is None or found[0] not in targets:
            return False
        ref, bound = found
        for b in bound:
            if isinstance(b, Predicate):
                ref.predicates.append(b)
            elif isinstance(b, Condition):
                ref.conditions.append(b)
            else:
                self.feeds.append(b)
        return True

    def classify(self, conj: Any, scope: Scope
                 ) -> tuple[Mention, list[Predicate | Condition | Feed]] | None:
        """What a conjunct binds: one reference's key values, filter conditions or feed."""
        if isinstance(conj, ast.NullTest):
            hit = column_of(conj.arg, scope)
            if hit and hit[0].role(hit[1]) == "filter":
                is_null = conj.nulltesttype == enums.NullTestType.IS_NULL
                if is_null and hit[0].id in scope.nullable:
                    return None  # true of the join's NULL-extended rows: not the tool's
                return hit[0], [Condition(hit[1], "is null" if is_null else "is not null")]
            return None
        if isinstance(conj, ast.SubLink):
            return self.in_subquery(conj, scope)
        if isinstance(conj, ast.BoolExpr) and conj.boolop == enums.BoolExprType.OR_EXPR:
            return self.disjunction(conj, scope)
        if not isinstance(conj, ast.A_Expr):
            return None
        op, kind = operator(conj) or "", conj.kind
        if kind == _K.AEXPR_OP and op in _COMPARE:
            return self.comparison(conj, _COMPARE[op], scope)
        if kind in (_K.AEXPR_LIKE, _K.AEXPR_ILIKE) and op in ("~~", "~~*"):
            hit = column_of(conj.lexpr, scope)
            value = self.value(conj.rexpr, scope) if hit else None
            if hit and value and hit[0].role(hit[1]) == "filter":
                return hit[0], [Condition(hit[1], "like" if op == "~~" else "ilike", (value,))]
            return None
        if kind == _K.AEXPR_BETWEEN:
            hit = column_of(conj.lexpr, scope)
            low, high = (self.value(v, scope) for v in conj.rexpr or ()) if hit else (None, None)
            if hit and low and high and hit[0].role(hit[1]) == "filter":
                return hit[0], [Condition(hit[1], ">=", (low,)), Condition(hit[1], "<=", (high,))]
            return None
        if kind == _K.AEXPR_IN and op == "=":
            hit = column_of(conj.lexpr, scope)
            values = [self.value(v, scope) for v in conj.rexpr or ()] if hit else []
            if hit and values and all(values):
                return self.equal(hit, tuple(values), set_op=True)  # type: ignore[arg-type]
            return None
        if kind == _K.AEXPR_OP_ANY and op == "=":
            hit = column_of(conj.lexpr, scope)
            value = self.value(conj.rexpr, scope, is_set=True) if hit else None
            if hit and value:
                return self.equal(hit, (value,), set_op=True)
        return None

    def disjunction(self, conj: ast.BoolExpr, scope: Scope
                    ) -> tuple[Mention, list[Predicate | Condition | Feed]] | None:
        """An OR whose every branch gives a column of one reference values (``=``, ``IN``)
        binds it to all of them, as an IN list would: ``channel = 'eng' OR channel =
        'ops'``, or ``(channel = 'eng' AND …) OR (channel = 'ops' AND …)``. What else
        the branches say is Postgres's to apply (``residue``)."""
        branches: list[dict[tuple[int, str], list[Value]]] = []
        refs: dict[int, Mention] = {}
        residue = False
        for branch in conj.args or ():
            given: dict[tuple[int, str], list[Value]] = {}
            for part in conjuncts(branch):
                hit = self.classify(part, scope)
                found = [b for b in hit[1] if isinstance(b, Predicate | Condition)
                         and _gives_values(b)] if hit is not None else []
                if hit is None or len(found) < len(hit[1]) or not found:
                    residue = True
                for b in found:
                    assert hit is not None
                    refs[hit[0].id] = hit[0]
                    given.setdefault((hit[0].id, b.column), []).extend(b.values)
            branches.append(given)
        common = set(branches[0]).intersection(*branches[1:]) if branches else set()
        if not common:
            return None
        ref = refs[min(common)[0]]
        bound: list[Predicate | Condition | Feed] = []
        for ref_id, column in sorted(common, key=lambda c: c[1]):
            if ref_id != ref.id:
                residue = True
                continue
            values = tuple(v for given in branches for v in given[(ref_id, column)])
            bound.append(Predicate(column, values) if ref.role(column) == "key"
                         else Condition(column, "in", values))
        self.residue = residue or any(len(given) > len(common) for given in branches)
        return ref, bound

    def equal(self, hit: tuple[Mention, str], values: tuple[Value, ...], set_op: bool
              ) -> tuple[Mention, list[Predicate | Condition | Feed]] | None:
        ref, column = hit
        role = ref.role(column)
        if role == "key":
            return ref, [Predicate(column, values)]
        if role == "filter":
            return ref, [Condition(column, "in" if set_op else "=", values)]
        return None

    def comparison(self, conj: Any, op: str, scope: Scope
                   ) -> tuple[Mention, list[Predicate | Condition | Feed]] | None:
        for col, other, this_op in ((conj.lexpr, conj.rexpr, op),
                                    (conj.rexpr, conj.lexpr, _MIRROR[op])):
            hit = column_of(col, scope)
            if hit is None:
                continue
            ref, column = hit
            value = self.value(other, scope)
            if value is not None:
                if this_op == "=":
                    return self.equal(hit, (value,), set_op=value.is_set)
                if ref.role(column) == "filter":
                    return ref, [Condition(column, this_op, (value,))]
                return None
            if this_op == "=" and ref.role(column) == "key" and self.feedable(other, scope, ref):
                chain = list(reversed(list(scope.chain())))
                return ref, [Feed(ref, column, other, scope,
                                  tuple(c for s in chain for c in s.with_nodes),
                                  any(s.recursive for s in chain))]
        return None

    def in_subquery(self, conj: Any, scope: Scope
                    ) -> tuple[Mention, list[Predicate | Condition | Feed]] | None:
        if conj.subLinkType != enums.SubLinkType.ANY_SUBLINK or (
                conj.operName and operator(ast.A_Expr(name=conj.operName)) != "="):
            return None
        hit = column_of(conj.testexpr, scope)
        if hit is None or not self.uncorrelated(conj.subselect, scope):
            return None
        return self.equal(hit, (self.subquery_value(conj.subselect, scope),), set_op=True)

    def feedable(self, node: Any, scope: Scope, ref: Mention) -> bool:
        """Whether ``node`` reads only other FROM items' columns: a join can feed a key."""
        columns = [n for n in walk(node) if isinstance(n, ast.ColumnRef)]
        if not columns or aggregates(node) or any(isinstance(n, ast.SubLink)
                                                     for n in walk(node)):
            return False
        for col in columns:
            item = item_of(col, scope)
            if item is None or item.ref is ref:
                return False
        return True

    # -- LIMIT ----------------------------------------------------------------

    def push_limit(self, node: ast.SelectStmt, scope: Scope) -> None:
        """Give the statement's LIMIT to its one reference, when it applies to it alone."""
        if (node.op != enums.SetOperation.SETOP_NONE or node.limitCount is None
                or len(self.refs) != 1 or len(scope.items) != 1 or scope.refs != self.refs
                or scope.unbound or node.sortClause or node.groupClause or node.havingClause
                or node.distinctClause or node.windowClause or node.lockingClause
                or aggregates(node.targetList)
                or any(isinstance(n, ast.SubLink) for n in walk(node))):
            return
        ref = self.refs[0]
        limit = self.value(node.limitCount, scope)
        offset = self.value(node.limitOffset, scope) if node.limitOffset is not None else None
        if limit is None or limit.is_set or (node.limitOffset is not None and offset is None):
            return
        ref.limit, ref.offset = limit, offset
        ref.keys_only = not ref.conditions


def _gives_values(bound: Predicate | Condition) -> bool:
    """A key's values, or a filter's ``=``/``IN`` ones: what an OR can gather into a list."""
    return isinstance(bound, Predicate) or bound.op in ("=", "in")


def analyze(sql: str, node: Any, lookup: Lookup) -> Plan:
    """The plan of one parsed statement (``node`` is the RawStmt's ``stmt``)."""
    a = _Analyzer(sql, lookup)
    root = Scope(None)
    target: Mention | None = None
    with_at = None
    with_clause = getattr(query_of(node), "withClause", None)  # CREATE TABLE AS: its query's
    if with_clause is not None:
        with_at = a.spans.with_insert_point(with_clause)
    set_columns: tuple[str, ...] = ()
    set_values: tuple[Value | None, ...] = ()
    fully_bound = True
    has_from = False
    returning = None

    if isinstance(node, ast.SelectStmt):
        scope = a.select(node, root)
        a.push_limit(node, scope)
    elif isinstance(node, ast.InsertStmt):
        a.with_clause(with_clause, root)
        assert node.relation is not None  # INSERT, UPDATE and DELETE name their table
        target = a.add_ref(node.relation, root, "write")
        root.refs.clear()  # the target is written, never read, by an INSERT
        root.items.clear()
        a.visit(node.selectStmt, root)
        returning = a.spans.returning_span() if node.returningClause else None
    elif isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
        a.with_clause(with_clause, root)
        assert node.relation is not None
        target = a.add_ref(node.relation, root, "write")
        extra = node.fromClause if isinstance(node, ast.UpdateStmt) else node.usingClause
        has_from = bool(extra)
        for item in extra or ():
            a.from_item(item, root)
        unbound = a.where(node.whereClause, root, root.refs)
        fully_bound = unbound == 0 and not has_from
        if isinstance(node, ast.UpdateStmt):
            cols, vals = [], []
            for res in node.targetList or ():
                cols.append(res.name if not res.indirection else "")
                v = a.value(res.val, root) if not isinstance(res.val, ast.MultiAssignRef) else None
                vals.append(v)
                a.visit(res.val, root)
            set_columns, set_values = tuple(cols), tuple(vals)
        returning = a.spans.returning_span() if node.returningClause else None
    else:
        a.visit(node, root)

    fed = FeedBuilder(a.feeds, item_of).build_all()
    refs = tuple(m.frozen(fed.get(m.id, ())) for m in a.refs)
    nodes = list(walk(node))  # one walk for what the plan says of the whole tree
    params = params_among(nodes)
    return Plan(
        rescans=may_rescan(nodes),
        sets_config=calls_among(nodes, frozenset(("set_config",))),
        sql=sql,
        node=node,
        references=refs,
        target=None if target is None else refs[target.id],
        with_insert_at=with_at,
        query_at=query_start(sql, node),
        max_param=max(params, default=0),
        returning_span=returning,
        set_columns=set_columns,
        set_values=set_values,
        where_fully_bound=fully_bound,
        has_from=has_from,
    )
