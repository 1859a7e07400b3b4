"""Keys fed by the data: a join, LATERAL or correlated subquery gives a key its values.

When ``R.k = <expression over other FROM items>`` binds a required key, the
items the expression reads *feed* ``R``. Before ``R`` is called, the sidecar
evaluates one query over the feeders' own rows:

    WITH <the statement's CTEs>
    SELECT DISTINCT <expression> FROM <feeders> WHERE <the conjuncts among them>

and ``R`` is called once per distinct value. That query is read like any
statement: the feeders' own resources are resolved first (so chains A feeds B
feeds C work), sharing the statement's calls. No I/O here: this module only
writes the query.

Rules:
- The feeders are the items the expression reads, and, transitively, the
  items that feed their own keys. ``R`` among them is a cycle: an error naming
  both references.
- The conjuncts kept are those (of WHERE and of every ON, in any scope) whose
  columns all belong to the feeders: they can only narrow the key values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pglast import ast, parser

from glove_scratchpad import errors

from .nodes import Predicate, Value, deparse, walk

__all__ = ["Feed", "FeedBuilder"]


@dataclass(frozen=True, slots=True)
class Feed:
    """``ref.key = expr``, where ``expr`` reads other FROM items (in ``scope`` or above)."""

    ref: Any  # the reference whose key is fed, as the analyzer fills it (``plan.Mention``)
    key: str
    expr: Any
    scope: Any
    # The CTEs visible where the feed is (outermost first), and whether one is RECURSIVE:
    # inside a CTE's body, only those before it.
    ctes: tuple[Any, ...] = ()
    recursive: bool = False


class FeedBuilder:
    """Turns each feed into a key predicate whose value is the feeders' query."""

    def __init__(self, feeds: list[Feed], resolve_item: Callable[[Any, Any], Any]) -> None:
        self.feeds = feeds
        self.resolve_item = resolve_item

    def build_all(self) -> dict[int, tuple[Predicate, ...]]:
        """The key predicates the feeds give, by the id of the reference they bind: new
        values, which the plan's frozen references are made with."""
        fed: dict[int, tuple[Predicate, ...]] = {}
        for feed in self.feeds:
            ref_id = feed.ref.id
            if any(p.column == feed.key for p in (*feed.ref.predicates, *fed.get(ref_id, ()))):
                continue  # a value binds it already; the join applies afterwards
            fed[ref_id] = (*fed.get(ref_id, ()), Predicate(feed.key, (self.value(feed),)))
        return fed

    def items_of(self, node: Any, scope: Any) -> list[Any] | None:
        items = []
        for col in walk(node):
            if isinstance(col, ast.ColumnRef):
                item = self.resolve_item(col, scope)
                if item is None:
                    return None
                items.append(item)
        return items

    def feeders(self, feed: Feed) -> list[Any]:
        found: list[Any] = []
        todo = list(self.items_of(feed.expr, feed.scope) or ())
        while todo:
            item = todo.pop()
            if item in found:
                continue
            if item.ref is feed.ref:
                other = next(i for i in found + todo if i is not item) if found else item
                raise errors.MissingRequiredKey(
                    f'the keys of "{feed.ref.label}" and "{getattr(other, "alias", "?")}" '
                    "feed each other: neither can be called first",
                    hint=f"Give one of them its key as a value, e.g. WHERE "
                    f"{feed.ref.alias}.{feed.key} = '…', or in a subquery that stands alone.",
                    table_name=feed.ref.name, column_name=feed.key)
            found.append(item)
            if item.ref is not None:
                for other in self.feeds:
                    if other.ref is item.ref:
                        todo.extend(self.items_of(other.expr, other.scope) or ())
        return sorted(found, key=lambda i: (i.scope.depth, i.order))

    def value(self, feed: Feed) -> Value:
        items = self.feeders(feed)
        scopes = {id(i.scope): i.scope for i in items} | {id(feed.scope): feed.scope}
        conds = []
        for scope in scopes.values():
            for s in scope.chain():
                for conj in s.conjuncts:
                    found = self.items_of(conj, s)
                    if found and all(i in items for i in found) and not any(
                            isinstance(n, ast.SubLink) for n in walk(conj)):
                        text = f"({deparse(conj)})"
                        if text not in conds:
                            conds.append(text)
        ctes = [deparse(c) for c in feed.ctes]
        sql = ""
        if ctes:
            sql = f"WITH {'RECURSIVE ' if feed.recursive else ''}{', '.join(ctes)} "
        shown = deparse(feed.expr)
        sql += (f"SELECT DISTINCT {shown} FROM {', '.join(deparse(i.node) for i in items)}"
                + (f" WHERE {' AND '.join(conds)}" if conds else ""))
        node = parser.parse_sql(sql)[0].stmt
        return Value(sql, node, is_set=True, has_subquery=True,
                     source=f"one call per distinct {shown}")
