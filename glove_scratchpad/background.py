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


def hold(work: Coroutine[Any, Any, Any], held: set[asyncio.Task[Any]]) -> asyncio.Task[Any]:
    """``work`` as a task of its own, in ``held`` until it ends."""
    task = asyncio.ensure_future(work)
    held.add(task)
    task.add_done_callback(held.discard)
    return task
