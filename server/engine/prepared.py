"""What a view keeps of one SQL text: the ``Prepared`` record, and the fast path's
compiled read within it.

Rules:
- Each part is filled the first time a statement of that text needs it, and never
  changes afterwards: resources never change while they are served.
- Describe results and rewrites vary with more than the text (parameter types,
  settings, RETURNING, kept tables): each record keeps at most ``VARIANTS`` of them,
  the oldest going first (``Variants``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .context import CallArgs

if TYPE_CHECKING:
    from ..sql.analysis import Plan, Reference
    from ..sql.rewrite import Rewritten

__all__ = ["VARIANTS", "CachedCall", "Compiled", "Prepared", "Variants"]

VARIANTS = 16  # Describe results and rewrites one text keeps
V = TypeVar("V")


class Variants(dict[tuple[Any, ...], V]):
    """A record's variants of one part, at most ``VARIANTS``: the oldest goes first (a
    dict keeps its keys in order). A text has few (parameter types and settings,
    RETURNING and kept tables), so which goes matters little, and a hit is one dict
    lookup, not an LRU's bookkeeping: it comes with every statement of the text."""

    def put(self, key: tuple[Any, ...], value: V) -> V:
        if len(self) >= VARIANTS:
            del self[next(iter(self))]
        self[key] = value
        return value


@dataclass(frozen=True, slots=True)
class CachedCall:
    """A reference's one call, with the keys its caches know it by."""

    args: CallArgs
    # (resource, identity): the memory cache's, for a user whose calls carry no credentials
    # of their own (``fast._cached`` adds them to it for one whose do)
    key: tuple[str, Any]
    shown: dict[str, Any]  # what Result.touched shows
    touched: tuple[str, str, Any]  # its ``touch_key``

    @classmethod
    def of(cls, ref: Reference, args: CallArgs) -> CachedCall:
        name = ref.resource.name
        return cls(args, (name, args.identity), args.shown(), args.touch_key(name, "select"))


@dataclass(frozen=True, slots=True)
class Compiled:
    """A read whose calls may all be answered from their caches: its plan, and each
    reference's call when the text alone fixes it (no parameter among its values)."""

    plan: Plan
    fixed: tuple[CachedCall | None, ...]  # by plan.reads


@dataclass(slots=True)
class Prepared:
    """What one SQL text needs, found once: each part filled when first needed."""

    gated: bool = False  # passed the gate, whatever its parameters' values
    plan: Plan | None = None
    # Describe results by (parameter types, settings parsed under).
    described: Variants[Any] = field(default_factory=Variants)
    # Rewritten texts by (RETURNING, kept tables, twin): a plan's references always get
    # the same CTEs.
    rewrites: Variants[Rewritten] = field(default_factory=Variants)
    compiled: Compiled | None = None  # the fast path's read (``fast.py``)
    compile_tried: bool = False  # whether ``fast.compile`` judged it (None: never)
