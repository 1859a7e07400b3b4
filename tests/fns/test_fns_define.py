"""Defining functions: define_fn, fn_from_tool, the parameters derived from an input
schema, FnCatalog, and calling a function from Python. No sidecar here but the last test."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad import errors
from glove_scratchpad.catalog import fn_ddl
from glove_scratchpad.resources import (
    Fn,
    FnCatalog,
    FnParam,
    ResourceDefinitionError,
    define_fn,
    fn_from_tool,
)


class Point(BaseModel):
    x: int
    y: int = 0


def test_define_fn_with_a_json_schema() -> None:
    fn = define_fn(
        "lookup",
        input={
            "type": "object",
            "properties": {
                "userId": {"type": "integer", "description": "Whose"},
                "since": {"type": "string", "format": "date-time"},
                "time": {"type": "string"},
                "kind": {"enum": ["a", "b"], "default": "a"},
                "args": {"type": "object"},
                "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                   {"type": "null"}]},
            },
            "required": ["userId"],
        },
        handler=lambda args: args,
        description="Looks up",
    )
    assert fn.params == (
        FnParam("user_id", "userId", "bigint", "Whose", True),
        FnParam("since", "since", "timestamp with time zone"),
        FnParam("time_", "time", "text"),  # a keyword: time => … would not parse
        FnParam("kind", "kind", "text", "(one of: a, b; default: \"a\")"),
        FnParam("args_2", "args", "jsonb"),  # args is the jsonb object of them all
        FnParam("tags", "tags", "jsonb"),
    )
    assert fn.signature() == ("lookup(args jsonb, user_id bigint, since timestamp with time "
                              "zone, time_ text, kind text, args_2 jsonb, tags jsonb)")
    assert fn.summary() == (
        "Looks up. Arguments, named (x => …) or as one jsonb object (args): user_id bigint "
        "(required) (the tool's \"userId\"): Whose; since timestamp with time zone; time_ text "
        "(the tool's \"time\"); kind text (one of: a, b; default: \"a\"); args_2 jsonb (the "
        "tool's \"args\"); tags jsonb. Returns jsonb.")


def test_define_fn_with_a_model_or_nothing() -> None:
    class Query(BaseModel):
        text: str = Field(description="What to look for")
        limit: int = 10
        mode: Literal["fast", "slow"] | None = None
        day: dt.date | None = None

    fn = define_fn("search", input=Query, handler=lambda q: q.text)
    assert fn.model is Query
    assert [(p.name, p.pg_type, p.required, p.description) for p in fn.params] == [
        ("text", "text", True, "What to look for"),
        ("limit_", "bigint", False, "(default: 10)"),  # limit => … would not parse
        ("mode", "text", False, "one of: fast, slow"),
        ("day", "date", False, ""),
    ]
    anything = define_fn("anything", handler=lambda args: args)
    assert (anything.params, anything.input_schema, anything.model) == ((), None, None)
    assert anything.summary() == "Arguments: any JSON object, as args. Returns jsonb."
    empty = define_fn("empty", input={"type": "object", "properties": {}}, handler=print)
    assert empty.summary() == "Takes no arguments. Returns jsonb."


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "Bad-Name"}, "is not a lower-case SQL identifier"),
    ({"name": "pg_thing"}, "reserved prefix"),
    ({"name": "_gs_thing"}, "reserved prefix"),
    ({"handler": 42}, "handler must be callable"),
    ({"input": {"type": "array"}}, "must describe a JSON object"),
    ({"input": {"type": "object", "properties": {"x": {"type": "nope"}}}},
     "not a valid JSON Schema"),
    ({"input": 42}, "must be a pydantic model or a JSON Schema dict"),
])
def test_define_fn_refuses_what_could_not_be_served(kwargs: dict[str, Any], message: str) -> None:
    spec: dict[str, Any] = {"name": "ok", "handler": lambda args: args, **kwargs}
    with pytest.raises(ResourceDefinitionError, match=message):
        define_fn(spec.pop("name"), **spec)


async def test_calling_a_function_from_python() -> None:
    class In(BaseModel):
        n: int

    double = define_fn("double", input=In, handler=lambda x: {"n": x.n * 2})
    assert await double.call({"n": "21"}) == {"n": 42}
    with pytest.raises(errors.InvalidParameterValue, match='invalid argument "n"'):
        await double.call({"n": "x"})

    async def later(args: dict[str, Any]) -> Any:
        return {"at": dt.date(2024, 1, 2), "items": (1, 2)}

    assert await define_fn("later", handler=later).call() == {"at": "2024-01-02",
                                                               "items": [1, 2]}
    with pytest.raises(errors.ExternalRoutineError, match="not JSON"):
        await define_fn("nan", handler=lambda args: float("nan")).call()


async def test_fn_from_tool() -> None:
    def convert_amount(amount: float, currency: str = "EUR", *, rounded: bool = False) -> dict:
        """Converts an amount.

        More detail."""
        value = amount * 2
        return {"value": round(value) if rounded else value, "currency": currency}

    fn = fn_from_tool(convert_amount)
    assert fn.name == "convert_amount"
    assert fn.description == "Converts an amount.\n\nMore detail."
    assert [(p.name, p.pg_type, p.required) for p in fn.params] == [
        ("amount", "double precision", True), ("currency", "text", False),
        ("rounded", "boolean", False)]
    assert await fn.call({"amount": 1.25, "rounded": True}) == {"value": 2, "currency": "EUR"}
    with pytest.raises(errors.InvalidParameterValue, match='argument "amount"'):
        await fn.call({})
    with pytest.raises(errors.InvalidParameterValue, match='argument "extra"'):
        await fn.call({"amount": 1, "extra": 1})

    async def norm(p: Point) -> int:
        return abs(p.x) + abs(p.y)

    named = fn_from_tool(norm, name="manhattan", description="L1 norm")
    assert (named.name, named.description, named.model) == ("manhattan", "L1 norm", Point)
    assert await named.call({"x": -3, "y": 4}) == 7

    def positional(a: int, /, b: int) -> int:
        return a - b

    assert await fn_from_tool(positional).call({"a": 5, "b": 3}) == 2


def test_fn_catalog() -> None:
    a = define_fn("a", handler=print)
    b = define_fn("b", handler=print)
    catalog = FnCatalog([a])
    assert catalog.add(b) is b
    assert catalog.names() == ["a", "b"]
    assert list(catalog) == [a, b]
    assert (len(catalog), "a" in catalog, "c" in catalog) == (2, True, False)
    assert (catalog.get("a"), catalog.get("c"), catalog["b"]) == (a, None, b)
    with pytest.raises(ValueError, match="two functions are named a"):
        catalog.add(define_fn("a", handler=print))
    with pytest.raises(TypeError):
        catalog.add("a")  # type: ignore[arg-type]
    assert not FnCatalog()


def test_the_shell_ddl() -> None:
    fn = define_fn("greet", input={"type": "object", "properties": {
        "name": {"type": "string", "description": "It's whom"}}}, handler=print)
    create, comment = fn_ddl(fn)
    assert create.startswith(
        'CREATE FUNCTION "fn"."greet"(args jsonb DEFAULT NULL, "name" text DEFAULT NULL) '
        "RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $_gs_$")
    assert "RETURN jsonb_build_array($1, $2);" in create
    assert comment == ('COMMENT ON FUNCTION "fn"."greet"(jsonb, text) IS E\'Arguments, named '
                       "(x => …) or as one jsonb object (args): name text: It''s whom. "
                       "Returns jsonb.'")


async def test_database_create_takes_a_list_or_a_catalog(sidecar: Any) -> None:
    from glove_scratchpad.resources import define_resource
    from glove_scratchpad.server import Database
    from glove_scratchpad.server.engine.policy import Policy

    fns: list[Fn] = [define_fn("one", handler=lambda args: 1)]
    hidden = define_resource("hidden", columns=[("x", "bigint")], volatility="stable",
                             select=lambda b: [])
    db = await Database.create([hidden], sidecar=sidecar, database="test_fns_create", fns=fns)
    try:
        assert isinstance(db.fns, FnCatalog) and db.fns.names() == ["one"]
        assert (await db.execute("SELECT fn.one()")).rows == [(1,)]
        # A role that sees fewer resources has a sidecar database of its own: with the shells.
        session = await db.open_session(Policy(deny=("hidden",)))
        assert session.view is not db.main
        assert (await session.execute("SELECT fn.one() AS v")).rows == [(1,)]
    finally:
        await db.close()
    with pytest.raises(ValueError, match="two functions"):
        await Database.create([], sidecar=sidecar, database="test_fns_dupes",
                              fns=FnCatalog(fns + fns))
