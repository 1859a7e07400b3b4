"""A view: the resources one role sees, and one ``Prepared`` record per SQL text.

Rules:
- A view keeps what depends only on a statement's text, in one record per text
  (``Prepared``): the gate's verdict, the plan, the sidecar's Describe, the
  rewrites and the fast path's compiled read. At most ``PLAN_CACHE_SIZE`` texts
  are kept, the least recently used out. Resources never change while they are
  served, so nothing here goes stale; a compiled read is answered from its calls'
  caches only while they hold them (``fast.reads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache

from glove_scratchpad.catalog import Pool

from ..sql.known import Known
from .prepared import Prepared

__all__ = ["PLAN_CACHE_SIZE", "View"]

PLAN_CACHE_SIZE = 4096  # statement texts a view keeps a record of


@dataclass
class View:
    """The resources one role sees, in a sidecar database of their own, with the records
    of the statements it ran."""

    visible: frozenset[str]
    database: str
    pool: Pool
    # The names its statements may use, as the gate and the planner read them
    # (``statement.known``): made on first use, then kept.
    known: Known | None = None
    texts: LRUCache[str, Prepared] = field(default_factory=lambda: LRUCache(PLAN_CACHE_SIZE))
    # A result's columns by its RowDescription's bytes (hashed at C speed), else its fields.
    columns: LRUCache[bytes | tuple[Any, ...], tuple[Any, ...]] = field(
        default_factory=lambda: LRUCache(PLAN_CACHE_SIZE))

    def prepared(self, sql: str) -> Prepared:
        """The record of a text, made empty the first time."""
        found = self.texts.get(sql)
        if found is None:
            found = self.texts[sql] = Prepared()
        return found
