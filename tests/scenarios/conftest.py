"""One Database for the scenarios, served in process and by a wire server on port 0.

Both ways in share the Database, so they see the same resources with the same
state: the demo set, ``tests/net/fix_wire.py``'s ``items``, and
``tests/engine/fix_resources.py``'s recorded resources (``search``, ``notes``,
``github_pr``), plus one function, ``fn.add``. Writes are allowed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.resources import define_fn
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database

from ..engine.fix_resources import Recorder, github_pr, notes, search
from ..fix_server import serving
from ..net.fix_wire import wire_resources
from .fix_ways import WAYS, Way, open_way


class Add(BaseModel):
    a: int = Field(description="The first term")
    b: int = Field(default=0, description="The second term")


@dataclass
class World:
    """What the scenario resources and functions were called with."""

    search: Recorder = field(default_factory=Recorder)
    notes: Recorder = field(default_factory=Recorder)
    github_pr: Recorder = field(default_factory=Recorder)
    fns: Counter[str] = field(default_factory=Counter)

    def reset(self) -> None:
        for rec in (self.search, self.notes, self.github_pr):
            rec.calls.clear()
            rec.writes.clear()
        self.fns.clear()

    def calls(self, name: str) -> int:
        """Calls of "search" (its select), "notes.insert" (a verb), or "fn.add"."""
        if name.startswith("fn."):
            return self.fns[name.removeprefix("fn.")]
        resource, _, verb = name.partition(".")
        rec: Recorder = getattr(self, resource)
        return rec.total(verb or "select")


@pytest.fixture(scope="session")
def scenario_world() -> World:
    return World()


@pytest.fixture(scope="session")
async def scenario_db(sidecar: EmbeddedSidecar, scenario_world: World
                      ) -> AsyncIterator[Database]:
    w = scenario_world

    def add(x: Add) -> dict[str, int]:
        w.fns["add"] += 1
        return {"sum": x.a + x.b}

    resources = [*demo_resources(), *wire_resources(), search(w.search), notes(w.notes),
                 github_pr(w.github_pr)]
    db = await Database.create(
        resources, writes=True, sidecar=sidecar, database="test_scenarios",
        fns=[define_fn("add", input=Add, handler=add, description="Adds two integers.")])
    yield db
    await db.close()


@pytest.fixture(scope="session")
async def scenario_server(scenario_db: Database) -> AsyncIterator[Any]:
    async with serving(scenario_db, writes=True) as srv:
        yield srv


@pytest.fixture
def world(scenario_world: World) -> World:
    """The calls made by one test (cleared before it)."""
    scenario_world.reset()
    return scenario_world


@pytest.fixture(params=WAYS)
async def way(request: pytest.FixtureRequest, scenario_db: Database,
              scenario_server: Any) -> AsyncIterator[Way]:
    dsn = f"postgresql://agent@127.0.0.1:{scenario_server.port}/scratchpad"
    w = await open_way(request.param, scenario_db, dsn)
    yield w
    await w.close()
