"""Fixtures of the kept-call tests (test_cache.py, test_fast.py): the served
database over ``fix_cache.resources``, and the counts of its calls and injected rows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_scratchpad.server import Database

from .fix_cache import Counts, counting, serve


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    return counting(monkeypatch)


@pytest.fixture
async def served(sidecar: Any, counts: Counts) -> AsyncIterator[tuple[Database, str]]:
    async with serve(sidecar, counts) as pair:
        yield pair
