"""Work nobody awaits (``background.py``): ``hold`` keeps a task in its owner's set until
it ends, whatever else holds it, and lets the owner cancel what it started."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from glove_scratchpad.background import hold


async def test_a_held_task_is_kept_until_it_ends_and_then_let_go():
    held: set[asyncio.Task[Any]] = set()
    gate = asyncio.Event()

    async def work() -> int:
        await gate.wait()
        return 7

    hold(work(), held)  # nothing else keeps the task
    gc.collect()
    (task,) = held
    assert not task.done()
    gate.set()
    assert await task == 7
    await asyncio.sleep(0)  # its done callback
    assert held == set()


async def test_the_owner_cancels_what_it_started():
    held: set[asyncio.Task[Any]] = set()
    tasks = [hold(asyncio.sleep(60), held) for _ in range(3)]
    assert held == set(tasks)
    for task in list(held):
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    await asyncio.sleep(0)
    assert held == set()
