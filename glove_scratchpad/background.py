"""Work that nobody awaits, as tasks of their own, held until they end.

The event loop keeps only a weak reference to a task: one that nothing holds may be
collected before it ends. ``hold`` keeps each in a set its owner names, which also
lets the owner wait for, or cancel, what it started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

__all__ = ["hold"]


def hold(work: Coroutine[Any, Any, Any], held: set[asyncio.Task[Any]], *,
         awaited: bool = True) -> asyncio.Task[Any]:
    """``work`` as a task of its own, in ``held`` until it ends.

    ``awaited=False``: whoever started it may be gone before it ends (a client that
    left), so its exception is retrieved here, not reported as never retrieved."""
    task = asyncio.ensure_future(work)
    held.add(task)
    task.add_done_callback(held.discard)
    if not awaited:
        task.add_done_callback(_retrieve)
    return task


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
