"""resource_from_tool: one plain or async callable served as one resource."""

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.errors import ExternalRoutineError, MissingRequiredKey
from glove_scratchpad.resources import (
    Bindings,
    ResourceDefinitionError,
    call_resolver,
    resource_from_tool,
)

# Models live at module level: the tool's annotations are resolved by name.


class Hit(BaseModel):
    title: str = Field(description="Page title")
    url: str | None = None


class SearchArgs(BaseModel):
    query: str = Field(description="Search terms")
    limit: int = 2


class Issue(BaseModel):
    number: int
    title: str


calls: list[dict] = []


def search(query: str, limit: int = 2) -> list[Hit]:
    """Search the web."""
    calls.append({"query": query, "limit": limit})
    return [Hit(title=f"{query} {i}") for i in range(limit)]


async def search_async(query: str, limit: int = 2) -> list[Hit]:
    return [Hit(title=f"{query} {i}") for i in range(limit)]


def search_model(args: SearchArgs) -> list[Hit]:
    assert isinstance(args, SearchArgs)
    return [Hit(title=f"{args.query} {i}") for i in range(args.limit)]


def first_hit(query: str) -> Hit:
    return Hit(title=query)


def untyped_output(query: str):
    return [{"title": query}]


def create_issue(title: str) -> Issue:
    calls.append({"title": title})
    return Issue(number=len(calls), title=title)


async def rows_of(resource, **bound):
    b = Bindings({k: v if isinstance(v, list) else [v] for k, v in bound.items()},
                 resource.name)
    stamp = {k: b.one(k) for k in resource.keys}
    return resource.validate_rows(await call_resolver(resource.select, b), stamp)


@pytest.fixture(autouse=True)
def _clear_calls():
    calls.clear()


def test_required_parameters_are_keys_and_optional_ones_are_not():
    r = resource_from_tool(search, name="web", volatility="volatile")
    assert r.keys == ("query",)
    assert r.verbs == ("select",)
    assert r.column("query").nullable is False
    assert r.column("limit").nullable is True
    assert "limit" not in r.keys


def test_output_columns_come_first_then_argument_columns_with_their_types():
    r = resource_from_tool(search, name="web", volatility="volatile")
    assert [(c.name, c.pg_type) for c in r.columns] == [
        ("title", "text"), ("url", "text"), ("query", "text"), ("limit", "bigint")]
    assert r.column("title").description == "Page title"


def test_the_docstring_is_the_description():
    assert resource_from_tool(search, name="web", volatility="volatile").description == (
        "Search the web.")


async def test_select_calls_the_tool_with_its_required_arguments():
    r = resource_from_tool(search, name="web", volatility="volatile")
    rows = await rows_of(r, query="pg")
    assert calls == [{"query": "pg", "limit": 2}]
    assert [row["title"] for row in rows] == ["pg 0", "pg 1"]


async def test_a_bound_optional_argument_reaches_the_tool():
    r = resource_from_tool(search, name="web", volatility="volatile")
    rows = await rows_of(r, query="pg", limit=3)
    assert calls == [{"query": "pg", "limit": 3}]
    assert len(rows) == 3


async def test_rows_carry_the_argument_values_the_output_lacks():
    # Postgres re-applies WHERE query = 'pg' AND limit = 1 to the rows: NULLs would drop them.
    r = resource_from_tool(search, name="web", volatility="volatile")
    (row,) = await rows_of(r, query="pg", limit=1)
    assert row == {"title": "pg 0", "url": None, "query": "pg", "limit": 1}


async def test_a_missing_required_argument_is_missing_required_key():
    r = resource_from_tool(search, name="web", volatility="volatile")
    with pytest.raises(MissingRequiredKey, match='"query"'):
        await call_resolver(r.select, Bindings({}, "web"))
    assert calls == []


async def test_an_async_tool_works():
    r = resource_from_tool(search_async, name="web", volatility="volatile")
    assert r.keys == ("query",)
    rows = await rows_of(r, query="pg", limit=1)
    assert rows == [{"title": "pg 0", "url": None, "query": "pg", "limit": 1}]


async def test_a_single_input_model_parameter_gives_the_arguments():
    r = resource_from_tool(search_model, name="web", volatility="volatile")
    assert r.keys == ("query",)
    assert r.column("query").description == "Search terms"
    assert r.column("limit").nullable is True
    assert [row["title"] for row in await rows_of(r, query="pg")] == ["pg 0", "pg 1"]
    assert [row["limit"] for row in await rows_of(r, query="pg", limit=1)] == [1]


async def test_a_single_model_return_annotation_gives_the_columns():
    r = resource_from_tool(first_hit, name="first_hit", volatility="stable")
    assert r.column_names == ("title", "url", "query")
    assert await rows_of(r, query="pg") == [{"title": "pg", "url": None, "query": "pg"}]


async def test_schema_gives_the_output_model_when_the_return_is_unannotated():
    r = resource_from_tool(untyped_output, name="web", volatility="volatile", schema=Hit)
    assert r.column_names == ("title", "url", "query")
    assert await rows_of(r, query="pg") == [{"title": "pg", "url": None, "query": "pg"}]


def test_no_output_model_is_a_definition_error():
    with pytest.raises(ResourceDefinitionError, match="give schema="):
        resource_from_tool(untyped_output, name="web", volatility="volatile")


def test_an_unknown_op_is_a_definition_error():
    with pytest.raises(ResourceDefinitionError, match="op must be"):
        resource_from_tool(search, name="web", volatility="volatile", op="delete")


async def test_a_row_without_a_required_output_field_is_an_error():
    def broken(query: str) -> list[Hit]:
        return [{"url": "https://example.org"}]

    r = resource_from_tool(broken, name="web", volatility="volatile")
    with pytest.raises(ExternalRoutineError, match='"web" returned a row without column "title"'):
        await rows_of(r, query="pg")


async def test_a_row_of_the_wrong_type_is_an_error():
    def broken(query: str) -> list[Issue]:
        return [{"number": "many", "title": "t"}]

    r = resource_from_tool(broken, name="issues", volatility="volatile")
    with pytest.raises(ExternalRoutineError, match=r'"issues".*"number".*many'):
        await rows_of(r, query="pg")


async def test_insert_calls_the_tool_once_per_row_and_returns_created_rows():
    r = resource_from_tool(create_issue, name="create_issue", volatility="volatile",
                           op="insert")
    assert r.verbs == ("insert",)
    assert r.keys == ()
    rows = r.validate_insert_rows([{"title": "a"}, {"title": "b"}])
    created = r.validate_rows(await call_resolver(r.insert, rows))
    assert calls == [{"title": "a"}, {"title": "b"}]
    assert created == [{"number": 1, "title": "a"}, {"number": 2, "title": "b"}]


async def test_call_resolver_passes_keyword_arguments():
    async def f(fn, *, x):
        return (fn, x)

    assert await call_resolver(f, "a", x=1) == ("a", 1)
    assert await call_resolver(lambda: 5) == 5
