"""A view: the resources one role sees, and the caches of its statements.

Rules:
- A view keeps what depends only on a statement's text: plans, descriptions,
  gate verdicts, rewrites and compiled statements, each bounded by
  ``PLAN_CACHE_SIZE`` (``keep``, the oldest out). Resources never change while
  they are served, so nothing here goes stale; a compiled read is answered from
  its calls' caches only while they hold them (``fast.reads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from glove_scratchpad.catalog import Pool

if TYPE_CHECKING:
    from ..sql.analysis import Plan
    from ..sql.rewrite import Rewritten
    from .fast import Compiled

__all__ = ["IMMUTABLE_CACHE_SIZE", "PLAN_CACHE_SIZE", "View", "keep"]

PLAN_CACHE_SIZE = 4096  # statements whose plans, descriptions and rewrites a view keeps
IMMUTABLE_CACHE_SIZE = 100_000  # immutable calls whose rows are kept (least recent go)


def keep(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Put ``value`` in a per-view cache of statements, the oldest going when it is full."""
    if len(cache) >= PLAN_CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = value


@dataclass
class View:
    """The resources one role sees, in a sidecar database of their own, with its caches."""

    visible: frozenset[str]
    database: str
    pool: Pool
    plans: dict[str, Plan] = field(default_factory=dict)  # by SQL text
    # Describe results by (SQL, parameter types, settings parsed under): resources never
    # change while served.
    descriptions: dict[tuple[str, tuple[int, ...], tuple[tuple[str, str], ...]], Any] = \
        field(default_factory=dict)
    gated: dict[str, bool] = field(default_factory=dict)  # SQL texts that passed the gate
    # Rewritten texts by (SQL, RETURNING, kept tables, twin): a plan's references always
    # get the same CTEs.
    rewrites: dict[tuple[Any, ...], Rewritten] = field(default_factory=dict)
    # A result's columns by its fields (the sidecar client keeps each description once).
    columns: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    # Reads whose calls may all be answered from caches, by SQL text (``fast.py``).
    compiled: dict[str, Compiled | None] = field(default_factory=dict)  # None: never
