"""Functions served as ``fn.<name>(…)``: a catalogue of test functions that count their
calls, a Database serving them with a few resources, and a wire server for psql and
psycopg."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.resources import (
    Bindings,
    Fn,
    define_fn,
    define_resource,
    fn_from_tool,
)
from glove_scratchpad.server import Database

from ..fix_server import serving

PEOPLE = [
    {"id": 1, "name": "Ada", "city": "London"},
    {"id": 2, "name": "Grace", "city": "Arlington"},
    {"id": 3, "name": "Edsger", "city": "Austin"},
]


class Add(BaseModel):
    a: int = Field(description="The first term")
    b: int = Field(default=0, description="The second term")


def catalogue(calls: Counter[str]) -> list[Fn]:
    """The test functions; each counts its calls in ``calls`` by name."""

    def echo(args: dict[str, Any]) -> dict[str, Any]:
        calls["echo"] += 1
        return args

    def add(x: Add) -> dict[str, int]:
        calls["add"] += 1
        return {"sum": x.a + x.b}

    async def pick(args: dict[str, Any]) -> dict[str, Any]:
        calls["pick"] += 1
        await asyncio.sleep(0)
        return {"id": args.get("id", 2), "ids": [1, 3]}

    def greet(args: dict[str, Any]) -> str:
        calls["greet"] += 1
        text = f"hello {args['name']}"
        return text.upper() if args.get("shout") else text

    def fail(args: dict[str, Any]) -> None:
        calls["fail"] += 1
        raise RuntimeError("the service said no")

    def nothing(args: dict[str, Any]) -> None:
        calls["nothing"] += 1
        return None

    def not_json(args: dict[str, Any]) -> Any:
        calls["not_json"] += 1
        return object()

    def scale(value: float, factor: float = 2.0) -> float:
        """Multiplies a value by a factor."""
        calls["scale"] += 1
        return value * factor

    return [
        define_fn("echo", handler=echo, description="Returns its arguments."),
        define_fn("add", input=Add, handler=add, description="Adds two integers."),
        define_fn("pick", handler=pick, description="Picks ids."),
        define_fn(
            "greet",
            input={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Whom to greet"},
                    "shout": {"type": "boolean"},
                },
                "required": ["name"],
                "additionalProperties": False,
            },
            handler=greet,
            description="Greets someone",
        ),
        define_fn("fail", handler=fail, description="Always fails."),
        define_fn("nothing", handler=nothing),
        define_fn("not_json", handler=not_json),
        fn_from_tool(scale),
    ]


def people_resource(calls: Counter[str]) -> Any:
    def select(b: Bindings) -> list[dict[str, Any]]:
        calls["people"] += 1
        if b.has("id"):
            return [p for p in PEOPLE if p["id"] in b.all("id")]
        return list(PEOPLE)

    return define_resource(
        "people", columns=[("id", "bigint"), ("name", "text"), ("city", "text")],
        volatility="volatile", description="People, by id.", select=select)


def lookup_resource(calls: Counter[str]) -> Any:
    """A resource with a required key: its argument can come from a function."""

    def select(b: Bindings) -> list[dict[str, Any]]:
        calls["lookup"] += 1
        return [{"id": i, "name": p["name"]} for i in b.all("id")
                for p in PEOPLE if p["id"] == i]

    return define_resource("lookup", columns=[("id", "bigint"), ("name", "text")],
                           keys=["id"], volatility="volatile", select=select)


NOTES: list[dict[str, Any]] = []


def notes_resource(calls: Counter[str]) -> Any:
    """Insert-only: what was inserted lands in NOTES."""

    def insert(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        calls["notes"] += 1
        NOTES.extend(rows)
        return rows

    return define_resource("notes", columns=[("body", "text"), ("data", "jsonb")],
                           volatility="volatile", insert=insert)


@pytest.fixture(scope="session")
def fn_calls() -> Counter[str]:
    return Counter()


@pytest.fixture
def calls(fn_calls: Counter[str]) -> Counter[str]:
    """The calls made by one test (cleared before it)."""
    fn_calls.clear()
    return fn_calls


@pytest.fixture(scope="session")
async def fn_db(sidecar: EmbeddedSidecar, fn_calls: Counter[str]) -> AsyncIterator[Database]:
    db = await Database.create(
        [people_resource(fn_calls), lookup_resource(fn_calls), notes_resource(fn_calls)],
        writes=True, sidecar=sidecar,
        database="test_fns", fns=catalogue(fn_calls))
    yield db
    await db.close()


@pytest.fixture(scope="session")
async def fn_server(fn_db: Database) -> AsyncIterator[Any]:
    async with serving(fn_db, writes=True) as srv:
        yield srv


@pytest.fixture
def fn_dsn(fn_server: Any) -> str:
    return f"postgresql://agent@127.0.0.1:{fn_server.port}/scratchpad"
