"""A statement's plan as frozen records: each mention of a resource (``Reference``) and
what the statement reads and writes (``Plan``). Pure.

Rules:
- A plan is kept with its text and shared by every run of it, so nothing in it
  changes once made: its references are frozen, their parts tuples.
- The analyzer fills a ``Mention`` per reference as it walks the tree (keys, filters,
  the columns looked up by, a LIMIT), and freezes each into its ``Reference`` once the
  walk and the feeds are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pglast import ast

from .nodes import Condition, Predicate, Value

__all__ = ["Mention", "Plan", "Reference"]


def _role(resource: Any, access: str, column: str) -> str | None:
    if column in resource.keys or (access == "write" and column in resource.primary_key):
        return "key"
    if column in getattr(resource, "filters", ()):
        return "filter"
    return None


@dataclass(frozen=True, slots=True)
class Reference:
    """One mention of a resource in a statement."""

    id: int
    schema: str | None
    name: str
    alias: str
    has_alias: bool
    span: tuple[int, int]  # the relation name's [start, end) in the statement text
    access: str = "read"  # "read" or "write"
    predicates: tuple[Predicate, ...] = ()  # keys: one call per value
    conditions: tuple[Condition, ...] = ()  # declared filters
    # Conjuncts naming this reference's columns that did not bind: (column, their SQL).
    unbound: tuple[tuple[str, str], ...] = ()
    limit: Value | None = None  # the statement's LIMIT, when it applies to this alone
    offset: Value | None = None
    keys_only: bool = False  # with limit: WHERE binds keys only, the server may stop
    # The columns Postgres looks its rows up by: compared with a value or another table's
    # column by =, IN, = ANY ("eq"), or <, <=, >, >=, BETWEEN ("range"), in WHERE or ON.
    # A kept call's table is indexed for them (cache.py).
    lookups: tuple[tuple[str, str], ...] = ()
    resource: Any = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.name if self.alias == self.name else f"{self.name} AS {self.alias}"

    def role(self, column: str) -> str | None:
        """"key" (fans out), "filter" (reaches the tool with its operator), or None."""
        return _role(self.resource, self.access, column)


@dataclass(slots=True, eq=False)
class Mention:
    """A reference while the analyzer walks the tree: what binds it so far."""

    id: int
    schema: str | None
    name: str
    alias: str
    has_alias: bool
    span: tuple[int, int]
    access: str
    resource: Any
    predicates: list[Predicate] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    unbound: list[tuple[str, str]] = field(default_factory=list)
    limit: Value | None = None
    offset: Value | None = None
    keys_only: bool = False
    lookups: list[tuple[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name if self.alias == self.name else f"{self.name} AS {self.alias}"

    def role(self, column: str) -> str | None:
        """"key" (fans out), "filter" (reaches the tool with its operator), or None."""
        return _role(self.resource, self.access, column)

    def frozen(self, fed: tuple[Predicate, ...] = ()) -> Reference:
        """The reference as the plan keeps it, with the keys its feeds give (``fed``)."""
        return Reference(
            self.id, self.schema, self.name, self.alias, self.has_alias, self.span,
            self.access, (*self.predicates, *fed), tuple(self.conditions),
            tuple(self.unbound), self.limit, self.offset, self.keys_only,
            tuple(self.lookups), self.resource)


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
    query_at: int = 0  # where a WITH of our own goes: CREATE TABLE AS's query
    # It calls set_config: what it sets would outlive a transaction that is not rolled back.
    sets_config: bool = False
    reads: tuple[Reference, ...] = field(init=False, repr=False)  # the read references

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads",
                           tuple(r for r in self.references if r.access == "read"))

    @property
    def is_insert(self) -> bool:
        return isinstance(self.node, ast.InsertStmt)
