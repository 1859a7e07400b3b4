"""A table of an HTTP API as the mapping plans it: its columns (``Col``: what each is
in the API), keys, filters and operations (``TablePlan``). Data only, no I/O.

Rules it keeps for every table, however it was made:
- A read sends a safe method (``SAFE_METHODS``), unless the config declares its
  operation a read (``TablePlan.declared_read``).
- Headers a client frames its request with, or that carry credentials
  (``NOT_COLUMNS``), are never columns, so that no WHERE value sets them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._paging import Paging
from ._spec import Operation

__all__ = ["NOT_COLUMNS", "SAFE_METHODS", "Col", "TablePlan"]

# The methods a read may send of itself: HTTP's safe methods. Any other is sent by a
# SELECT only when the config declares its operation a read.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# Headers a client sends by itself, that say how the request is framed or routed, or
# that carry credentials: never columns, so that no WHERE value sets them.
NOT_COLUMNS = frozenset({"authorization", "accept", "content-type", "user-agent",
                         "cookie", "idempotency-key", "x-api-key", "api-key",
                         "host", "content-length", "transfer-encoding", "connection",
                         "te", "trailer", "upgrade", "keep-alive", "expect",
                         "proxy-authorization", "proxy-connection", "forwarded",
                         "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
                         "x-auth-token", "x-access-token", "x-csrf-token"})


@dataclass(slots=True)
class Col:
    """One column of a table, and what it is in the API."""

    name: str
    pg_type: str
    description: str = ""
    nullable: bool = True
    prop: str | None = None  # the rows' JSON field it reads
    param: str | None = None  # the parameter it gives
    location: str | None = None  # where that parameter goes: path, query, header
    body: str | None = None  # the request body's field it gives (writes, a POST search)
    array: bool = False  # the parameter takes a list (IN)
    kind: str = ""  # the parameter's JSON type when it is an array or an object
    required: bool = False  # every row has its field: one without it is the API's error
    whole: bool = False  # it holds the row's whole JSON value (a free-form object, a scalar)

    @property
    def role(self) -> str:
        """What the column is, as scratchpad.resources says it."""
        parts = []
        if self.param:
            parts.append(f"the {self.location} parameter {self.param}")
        if self.body:
            parts.append(f"the request body's {self.body}")
        if self.prop:
            parts.append(f"the rows' own {self.prop}" if parts else "")
        said = " and ".join(p for p in parts if p)
        if self.param and self.prop:
            said += f" (a row whose {self.prop} differs is not returned)"
        return said


@dataclass(slots=True)
class TablePlan:
    """One table: its columns, keys and operations."""

    name: str
    description: str
    columns: list[Col] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    select: Operation | None = None  # the list, one-row or search operation
    item: Operation | None = None  # the item GET of a list-and-get table
    item_column: str | None = None  # the column whose = routes to ``item``
    rows: tuple[str, ...] = ()  # where the rows are in the select's response
    one_row: bool = False
    paging: Paging = field(default_factory=Paging)
    insert: Operation | None = None
    update: Operation | None = None
    delete: Operation | None = None
    volatility: str = "stable"
    ttl: float | None = None
    declared_read: bool = False  # the select is not GET, and the config says it reads
    whole: str | None = None  # the column the whole answer is (a GET with no schema)

    def column(self, name: str) -> Col | None:
        return next((c for c in self.columns if c.name == name), None)

    def by_param(self, name: str) -> Col | None:
        return next((c for c in self.columns if c.param == name), None)

    @property
    def operations(self) -> list[Operation]:
        return [op for op in (self.select, self.item, self.insert, self.update, self.delete)
                if op is not None]
