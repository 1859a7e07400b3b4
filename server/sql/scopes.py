"""The scopes of a statement's analysis: its FROM items, and what each scope binds. No I/O.

A scope is one SELECT level (or a write's top level): the references and other FROM
items it names, the CTEs visible in it, its conjuncts, and the references an outer
join has made nullable so far. ``analysis`` walks a statement scope by scope. The
gate keeps less: the CTE names visible at each point (``CteScope``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums

__all__ = ["CteScope", "Item", "Scope", "column_of", "conjuncts", "item_columns", "item_of",
           "may_rescan"]


class CteScope:
    """The CTE names visible at one point of a statement."""

    __slots__ = ("ctes", "parent")

    def __init__(self, parent: CteScope | None, ctes: Iterable[str] = ()) -> None:
        self.parent = parent
        self.ctes = frozenset(ctes)

    def has_cte(self, name: str) -> bool:
        scope: CteScope | None = self
        while scope is not None:
            if name in scope.ctes:
                return True
            scope = scope.parent
        return False


@dataclass(eq=False, slots=True)
class Item:
    """One FROM item: a resource, a CTE, a subquery, a function, a catalog relation."""

    alias: str
    node: Any
    ref: Any  # the Reference, or None: a CTE, a subquery, a function, a catalog relation
    scope: Scope
    order: int


class Scope:
    """One SELECT level of a statement (or a write's top level), inside its parent's."""

    __slots__ = ("conjuncts", "ctes", "depth", "items", "names", "nullable", "parent",
                 "recursive", "refs", "unbound", "with_nodes")

    def __init__(self, parent: Scope | None) -> None:
        self.parent = parent
        self.depth: int = parent.depth + 1 if parent is not None else 0
        self.refs: list[Any] = []  # References
        self.ctes: set[str] = set()
        self.with_nodes: list[Any] = []  # this scope's CommonTableExprs, in order
        self.recursive = False
        self.names: set[str | None] = set()  # every relation name or alias in this FROM
        self.items: dict[str, Item] = {}
        self.conjuncts: list[Any] = []  # of WHERE and of every ON
        self.unbound = 0  # WHERE conjuncts that bound nothing
        # References on the nullable side of an outer join already read: a clause applied
        # after the join sees their NULL-extended rows, which IS NULL matches.
        self.nullable: set[int] = set()

    def has_cte(self, name: str) -> bool:
        return any(name in s.ctes for s in self.chain())

    def chain(self) -> Iterator[Scope]:
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def all_refs(self) -> Iterator[Any]:
        for scope in self.chain():
            yield from scope.refs


def item_columns(item: Item) -> frozenset[str]:
    """The columns of a FROM item that a bare name may mean: a resource's; a function's
    or subquery's column aliases (``unnest(…) AS u(x)``, ``(VALUES …) v(x)``); or, for
    a function in FROM named by an alias alone (``unnest(…) u``), that alias. A LATERAL
    item reads others' rows, so it is none of these: it cannot feed a key alone."""
    if item.ref is not None:
        return frozenset(c.name for c in item.ref.resource.columns)
    node = item.node
    if not isinstance(node, ast.RangeFunction | ast.RangeSubselect) or node.lateral:
        return frozenset()
    alias = node.alias
    if alias is not None and alias.colnames:
        return frozenset(str(c.sval) for c in alias.colnames if isinstance(c, ast.String))
    if (isinstance(node, ast.RangeFunction) and alias is not None and alias.aliasname
            and len(node.functions or ()) == 1 and not node.coldeflist):
        return frozenset((alias.aliasname,))
    return frozenset()


def may_rescan(nodes: Iterable[Any]) -> bool:
    """Whether part of a statement, given by its nodes (``walk``), may run more than once
    (a subquery, LATERAL, WITH RECURSIVE): a reference read there is materialized once."""
    for n in nodes:
        if isinstance(n, ast.SubLink) or (isinstance(n, ast.WithClause) and n.recursive) or (
                isinstance(n, ast.RangeSubselect | ast.RangeFunction) and n.lateral):
            return True
    return False


def conjuncts(node: Any) -> list[Any]:
    """The top-level AND-ed conditions of a WHERE or ON."""
    if node is None:
        return []
    if isinstance(node, ast.BoolExpr) and node.boolop == enums.BoolExprType.AND_EXPR:
        out: list[Any] = []
        for arg in node.args or ():
            out.extend(conjuncts(arg))
        return out
    return [node]


def column_of(col: Any, scope: Scope) -> tuple[Any, str] | None:
    """A column of a resource of this very scope, named unambiguously: (its reference,
    the column)."""
    if not isinstance(col, ast.ColumnRef):
        return None
    fields = col.fields or ()
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


def item_of(col: Any, scope: Scope) -> Item | None:
    """The FROM item, in this scope or an enclosing one, that a column belongs to."""
    if not isinstance(col, ast.ColumnRef) or not all(
            isinstance(f, ast.String) for f in col.fields or ()):
        return None
    names = [f.sval for f in col.fields or ()]
    for s in scope.chain():
        if len(names) == 1:
            owners = [it for it in s.items.values() if names[0] in item_columns(it)]
            if len(owners) > 1:
                return None
            if owners:
                return owners[0]
        elif len(names) == 2 and names[0] in s.items:
            item = s.items[names[0]]
            ok = item.ref is None or item.ref.resource.column(names[1]) is not None
            return item if ok else None
    return None
