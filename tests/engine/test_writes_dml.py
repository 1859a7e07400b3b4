"""The failures a new user met, each through both ways in (in process and psycopg).

- UPDATE … FROM, DELETE … USING and RETURNING work, with write tools called only
  after the whole statement was checked;
- command tags count affected rows: a key that no row has is UPDATE 0 / DELETE 0,
  and the tool is not called for it;
- the first error is the true one: an unknown column is Postgres's own error,
  found before any tool is called; LIKE, <> and OR on a required key say that
  only =, IN and = ANY bind a key; a double-quoted value is explained.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, define_resource

from ..fix_server import dsn, serving
from ..scenarios.fix_ways import WAYS, Failed, open_way


class Note(BaseModel):
    id: int
    title: str
    owner: str


class Person(BaseModel):
    name: str
    handle: str


class Hit(BaseModel):
    query: str
    url: str


class World:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.notes = {1: Note(id=1, title="a", owner="ANN"), 2: Note(id=2, title="b", owner="BOB")}

    def resources(self) -> list[Any]:
        def notes_select(b: Bindings) -> list[Note]:
            self.calls.append(("notes.select", None))
            return list(self.notes.values())

        def notes_update(changes: dict, b: Bindings) -> None:
            self.calls.append(("notes.update", (b.one("id"), changes)))
            self.notes[b.one("id")] = self.notes[b.one("id")].model_copy(update=changes)

        def notes_delete(b: Bindings) -> None:
            self.calls.append(("notes.delete", b.one("id")))
            self.notes.pop(b.one("id"))

        def people_select(b: Bindings) -> list[Person]:
            self.calls.append(("people.select", None))
            return [Person(name="Ann", handle="ANN"), Person(name="Bob", handle="BOB")]

        def search_select(b: Bindings) -> list[Hit]:
            self.calls.append(("search.select", b.one("query")))
            return [Hit(query=b.one("query"), url="https://example.org")]

        return [
            define_resource("notes", schema=Note, primary_key=["id"], volatility="volatile",
                            select=notes_select, update=notes_update, delete=notes_delete),
            define_resource("people", schema=Person, volatility="volatile",
                            select=people_select),
            define_resource("search", schema=Hit, keys=["query"], volatility="volatile",
                            select=search_select),
        ]


@pytest.fixture
async def world(make_db: Any) -> AsyncIterator[tuple[World, Any, str]]:
    w = World()
    db = await make_db(w.resources())
    async with serving(db, writes=True) as srv:
        yield w, db, dsn(srv)


@pytest.fixture(params=WAYS)
async def way(request: Any, world: tuple[World, Any, str]) -> AsyncIterator[Any]:
    _, db, dsn = world
    w = await open_way(request.param, db, dsn)
    yield w
    await w.close()


async def test_update_from_changes_the_joined_rows(world, way):
    w, _, _ = world
    out = await way.execute("UPDATE notes n SET title = n.title || '+' FROM people p "
                            "WHERE p.name = 'Ann' AND n.owner = p.handle")
    assert out.tag == "UPDATE 1"
    assert ("notes.update", (1, {"title": "a+"})) in w.calls
    assert w.notes[1].title == "a+" and w.notes[2].title == "b"


async def test_delete_using_returns_the_targets_rows(world, way):
    w, _, _ = world
    out = await way.execute("DELETE FROM notes n USING people p WHERE p.name = 'Bob' "
                            "AND n.owner = p.handle RETURNING n.*")
    assert out.tag == "DELETE 1"
    assert out.columns == ["id", "title", "owner"]
    assert out.rows == [(2, "b", "BOB")]
    assert ("notes.delete", 2) in w.calls


async def test_a_key_no_row_has_affects_nothing(world, way):
    w, _, _ = world
    assert (await way.execute("UPDATE notes SET title = 'ghost' WHERE id = 9999")).tag == \
        "UPDATE 0"
    assert (await way.execute("DELETE FROM notes WHERE owner = 'nobody'")).tag == "DELETE 0"
    assert not [c for c in w.calls if c[0] in ("notes.update", "notes.delete")]


async def test_an_unknown_column_is_the_first_error_and_nothing_is_called(world, way):
    w, _, _ = world
    with pytest.raises(Failed) as info:
        await way.execute("SELECT nme FROM people")
    sqlstate, message, hint = info.value.error
    assert (sqlstate, message) == ("42703", 'column "nme" does not exist')
    assert hint and "people.name" in hint  # Postgres's own did-you-mean
    with pytest.raises(Failed) as info:
        await way.execute("SELECT * FROM search WHERE querry = 'x'")
    assert info.value.error[:2] == ("42703", 'column "querry" does not exist')
    assert w.calls == []


async def test_a_double_quoted_value_is_explained(world, way):
    with pytest.raises(Failed) as info:
        await way.execute('SELECT * FROM search WHERE query = "postgres"')
    sqlstate, message, hint = info.value.error
    assert (sqlstate, message) == ("42703", 'column "postgres" does not exist')
    assert hint and "single quotes" in hint and "'postgres'" in hint


@pytest.mark.parametrize("condition", [
    "query LIKE 'post%'", "query <> 'x'", "(query = 'a' OR url = 'b')"])
async def test_a_key_bound_by_another_operator_says_which_bind(world, way, condition):
    w, _, _ = world
    with pytest.raises(Failed) as info:
        await way.execute(f"SELECT * FROM search WHERE {condition}")
    sqlstate, message, hint = info.value.error
    assert sqlstate == "22023"
    assert 'required key "query"' in message and "does not give it one" in message
    assert hint and "query IN (" in hint
    assert w.calls == []
