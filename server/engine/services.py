"""What every session of a server shares: the narrow view of ``Database`` the rooms use.

Rules:
- The rooms reach the server's services through this Protocol, never through the
  ``Database`` class (which makes sessions, and so would close a circle).
- Nothing here changes while the server serves, but the caches' contents.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping, MutableSet
from typing import Any, Protocol

from glove_scratchpad.catalog import Audit, Journal, Schemas
from glove_scratchpad.resources import FnCatalog, Resource

from .approvals import Approvals
from .cache import KeptCalls
from .guard import Guard, Limits

__all__ = ["Services"]


class Services(Protocol):
    """The server's shared services: limits, the guard, the audit and journal, the
    lasting calls' caches, the resources and functions served."""

    schemas: Schemas
    limits: Limits
    resources: dict[str, Resource]
    fns: FnCatalog
    audit: Audit
    guard: Guard
    journal: Journal
    approvals: Approvals  # [approvals]: the rules, the requests, the sessions' taints
    kept: KeptCalls  # lasting calls kept as sidecar tables
    type_names: dict[int, str]
    workers: int

    @property
    def sessions(self) -> MutableSet[Any]:
        """Every session open (weakly held): scratchpad.activity and pg_cancel_backend."""

    @property
    def immutable(self) -> MutableMapping[Any, asyncio.Future[Any]]:
        """Lasting calls' rows in memory, by (resource, identity)."""

    def lasting_call(self, key: Any) -> asyncio.Future[Any] | None: ...

    def invalidate(self, resource: str) -> None: ...
