"""What a write sends is what the statement said, and what COMMIT will send is shown.

- An UPDATE's new values are checked against the schema, as an INSERT's are.
- Update and delete tools get the row's primary key and keys, and the filters'
  conditions the WHERE gave.
- An UPDATE or DELETE of a row a staged INSERT adds is folded into that INSERT.
- ``scratchpad.staged`` shows each staged write's rows, changes and bindings.

In process and over the wire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, Resource, define_resource

from ..scenarios.fix_ways import WAYS, Failed, Way, way_into


class Ticket(BaseModel):
    id: int | None = None
    project: str
    title: str
    state: Literal["open", "closed"] = "open"
    priority: int = 0


@dataclass
class Tracker:
    """A ticket tracker: tickets by project; every call recorded."""

    rows: dict[int, Ticket] = field(default_factory=lambda: {
        1: Ticket(id=1, project="a", title="one"), 2: Ticket(id=2, project="a", title="two"),
        3: Ticket(id=3, project="b", title="three", state="closed")})
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def resource(self) -> Resource:
        def select(b: Bindings) -> list[Ticket]:
            return [t for t in self.rows.values() if t.project == b.one("project")]

        def insert(rows: list[Ticket]) -> list[Ticket]:
            self.calls.append(("insert", [r.model_dump(exclude={"id"}) for r in rows]))
            made = []
            for row in rows:
                new = row.model_copy(update={"id": max(self.rows) + 1})
                self.rows[new.id] = new  # type: ignore[index]
                made.append(new)
            return made

        def update(changes: dict[str, Any], b: Bindings) -> None:
            self.calls.append(("update", (changes, b.get("id"), b.get("project"),
                                          b.where("state"))))
            ticket = self.rows[b.one("id")]
            self.rows[ticket.id] = ticket.model_copy(update=changes)  # type: ignore[index]

        def delete(b: Bindings) -> None:
            self.calls.append(("delete", (b.get("id"), b.get("project"), b.where("state"))))
            self.rows.pop(b.one("id"))

        return define_resource("tickets", schema=Ticket, keys=["project"], primary_key=["id"],
                               filters=["state"], volatility="volatile", select=select,
                               insert=insert, update=update, delete=delete, inline=True)


@pytest.fixture(params=WAYS)
async def tracker(request: Any, sidecar: Any) -> AsyncIterator[tuple[Tracker, Way]]:
    t = Tracker()
    async with way_into(request.param, sidecar, [t.resource()]) as way:
        yield t, way


async def test_an_updates_values_are_checked_against_the_schema(tracker):
    t, way = tracker
    with pytest.raises(Failed) as info:
        await way.execute("UPDATE tickets SET state = 'wontfix' WHERE project = 'a' AND id = 1")
    sqlstate, message, hint = info.value.error
    assert sqlstate == "22023"
    assert message == 'invalid value for column "state" of resource "tickets": \'wontfix\''
    assert hint and "\\d+ tickets" in hint
    assert t.calls == []  # nothing was handed to the tool
    out = await way.execute("SELECT state FROM tickets WHERE project = 'a' AND id = 1")
    assert out.rows == [("open",)]


async def test_update_and_delete_tools_get_the_keys_and_filters_the_where_binds(tracker):
    t, way = tracker
    out = await way.execute("UPDATE tickets SET priority = 2 WHERE project = 'a' AND "
                            "state = 'open' AND title = 'two'")
    assert out.tag == "UPDATE 1"
    out = await way.execute("DELETE FROM tickets WHERE project = 'b' AND state = 'closed'")
    assert out.tag == "DELETE 1"
    assert t.calls == [("update", ({"priority": 2}, 2, "a", [("=", "open")])),
                       ("delete", (3, "b", [("=", "closed")]))]


async def test_an_update_of_a_row_the_transaction_staged_is_folded_into_its_insert(tracker):
    t, way = tracker
    await way.execute("BEGIN")
    await way.execute("INSERT INTO tickets (project, title) VALUES ('a', 'new'), ('a', 'x')")
    out = await way.execute("UPDATE tickets SET priority = 1, state = 'closed' WHERE "
                            "project = 'a' AND title = 'new'")
    assert out.tag == "UPDATE 1"
    [(_, message, _)] = [n for n in out.notices if n[1].startswith("staged #2")]
    assert message == ("staged #2: changes 1 row that #1 stages, sent so changed with that "
                       "INSERT (the tool assigns their ids)")
    out = await way.execute("SELECT title, state, priority FROM tickets WHERE project = 'a' "
                            "ORDER BY title")
    assert out.rows == [("new", "closed", 1), ("one", "open", 0), ("two", "open", 0),
                        ("x", "open", 0)]
    await way.execute("SAVEPOINT s")
    out = await way.execute("DELETE FROM tickets WHERE project = 'a' AND title = 'x'")
    assert out.tag == "DELETE 1"
    out = await way.execute("SELECT id, status, rows FROM scratchpad.staged ORDER BY id")
    assert out.rows == [
        (1, "staged", [{"id": None, "project": "a", "title": "new", "state": "closed",
                        "priority": 1}]),
        (2, "folded into #1", None), (3, "folded into #1", None)]
    await way.execute("ROLLBACK TO SAVEPOINT s")  # the delete's fold goes with it
    out = await way.execute("COMMIT")
    assert t.calls == [("insert", [
        {"project": "a", "title": "new", "state": "closed", "priority": 1},
        {"project": "a", "title": "x", "state": "open", "priority": 0}])]
    assert [m for _, m, _ in out.notices] == [
        "fired #1: tickets.insert(2 rows)",
        "folded #2 into #1: tickets: row 1 of #1 changed before it is sent"]


async def test_staged_shows_the_rows_changes_and_bindings_commit_will_send(tracker):
    t, way = tracker
    await way.execute("BEGIN")
    await way.execute("INSERT INTO tickets (project, title) VALUES ('b', 'four')")
    await way.execute("UPDATE tickets SET priority = priority + 5 WHERE project = 'a' "
                      "AND state = 'open'")
    await way.execute("DELETE FROM tickets WHERE project = 'b' AND id = 3")
    out = await way.execute("SELECT id, verb, rows, changes, bindings FROM scratchpad.staged "
                            "ORDER BY id")
    assert out.rows == [
        (1, "insert", [{"id": None, "project": "b", "title": "four", "state": "open",
                        "priority": 0}], None, None),
        (2, "update", None, [{"priority": 5}, {"priority": 5}],
         [{"id": 1, "project": "a", "state": "open"},
          {"id": 2, "project": "a", "state": "open"}]),
        (3, "delete", None, None, [{"id": 3, "project": "b"}]),
    ]
    await way.execute("ROLLBACK")
    assert t.calls == []
