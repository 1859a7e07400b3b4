"""asyncpg's exchanges with the sidecar, counted as round trips by purpose.

Rules:
- The journal, the audit, the approvals, the kept calls' tables and the catalog's own
  work reach the sidecar through asyncpg; each holds its connection or pool through
  ``counted`` (the first three and the kept tables by way of ``_access.Access``), so
  every exchange it makes is counted (``metrics.sidecar_round_trip``) where it is made,
  under the purpose it serves. The project's own client counts its own
  (``_client.py``).
- A query, a fetch, a COPY is one round trip; a transaction block adds two (its BEGIN
  or SAVEPOINT, and its end).
- Nothing else changes: every other attribute is the connection's or pool's own.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, TypeVar, cast

from glove_scratchpad import metrics

__all__ = ["counted"]

T = TypeVar("T")


def counted(target: T, purpose: str) -> T:
    """``target`` (an asyncpg connection or pool), its round trips counted as ``purpose``
    (one of ``metrics``' bounded purposes)."""
    return cast(T, _Counted(target, purpose))


class _Counted:
    __slots__ = ("_purpose", "_target")

    def __init__(self, target: Any, purpose: str) -> None:
        self._target = target
        self._purpose = purpose

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        metrics.sidecar_round_trip(self._purpose)
        return await self._target.execute(*args, **kwargs)

    async def fetch(self, *args: Any, **kwargs: Any) -> Any:
        metrics.sidecar_round_trip(self._purpose)
        return await self._target.fetch(*args, **kwargs)

    async def fetchval(self, *args: Any, **kwargs: Any) -> Any:
        metrics.sidecar_round_trip(self._purpose)
        return await self._target.fetchval(*args, **kwargs)

    async def fetchrow(self, *args: Any, **kwargs: Any) -> Any:
        metrics.sidecar_round_trip(self._purpose)
        return await self._target.fetchrow(*args, **kwargs)

    async def copy_records_to_table(self, *args: Any, **kwargs: Any) -> Any:
        metrics.sidecar_round_trip(self._purpose)
        return await self._target.copy_records_to_table(*args, **kwargs)

    @contextlib.asynccontextmanager
    async def transaction(self, **kwargs: Any) -> AsyncIterator[None]:
        metrics.sidecar_round_trip(self._purpose)  # its BEGIN (or SAVEPOINT)
        try:
            async with self._target.transaction(**kwargs):
                yield
        finally:
            metrics.sidecar_round_trip(self._purpose)  # its COMMIT or ROLLBACK
