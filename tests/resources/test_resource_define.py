"""define_resource: every definition that could not be served fails when it is defined."""

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.resources import Column, ResourceDefinitionError, define_resource


class Pr(BaseModel):
    number: int = Field(description="PR number")
    title: str
    merged: bool


def _select(b):
    return []


def _define(name="github_pr", **kw):
    kw.setdefault("volatility", "stable")
    if "columns" not in kw:
        kw.setdefault("schema", Pr)
    if not any(v in kw for v in ("select", "insert", "update", "delete")):
        kw["select"] = _select
    return define_resource(name, **kw)


def test_a_valid_definition_keeps_what_it_was_given():
    r = _define(keys=["number"], primary_key=["number"], description="Pull requests")
    assert r.name == "github_pr"
    assert r.column_names == ("number", "title", "merged")
    assert r.keys == ("number",)
    assert r.primary_key == ("number",)
    assert r.volatility == "stable"
    assert r.description == "Pull requests"
    assert r.verbs == ("select",)
    assert r.schema is Pr


def test_definition_error_is_a_value_error():
    assert issubclass(ResourceDefinitionError, ValueError)


@pytest.mark.parametrize("name", ["GitHub", "1prs", "pull requests", "prs-list", "", "a" * 64])
def test_name_must_be_an_identifier(name):
    with pytest.raises(ResourceDefinitionError, match="not a lower-case SQL identifier"):
        _define(name)


def test_name_must_be_a_string():
    with pytest.raises(ResourceDefinitionError, match="identifier"):
        _define(42)


def test_name_may_not_take_a_reserved_prefix():
    with pytest.raises(ResourceDefinitionError, match="reserved prefix"):
        _define("pg_prs")


@pytest.mark.parametrize("column", ["xmin", "ctid", "oid", "tableoid"])
def test_a_column_may_not_take_a_system_columns_name(column):
    """Postgres would refuse the shell table at start, with a DuplicateColumnError."""
    with pytest.raises(ResourceDefinitionError, match=f"'{column}' is a Postgres system "
                       f"column name; call it '{column}_'"):
        _define(columns=[(column, "text")])


def test_no_columns_is_an_error():
    with pytest.raises(ResourceDefinitionError, match="has no columns"):
        _define(columns=[])


def test_neither_schema_nor_columns_is_an_error():
    with pytest.raises(ResourceDefinitionError, match="has no columns"):
        define_resource("prs", volatility="stable", select=_select)


def test_no_verb_is_an_error():
    with pytest.raises(ResourceDefinitionError, match="has no verb"):
        define_resource("prs", schema=Pr, volatility="stable")


def test_a_verb_must_be_callable():
    with pytest.raises(ResourceDefinitionError, match="select must be callable"):
        _define(select="list_prs")


def test_a_key_must_be_a_column():
    with pytest.raises(ResourceDefinitionError, match="key 'id' is not a column"):
        _define(keys=["id"])


def test_a_primary_key_column_must_be_a_column():
    with pytest.raises(ResourceDefinitionError, match="primary key column 'id' is not a column"):
        _define(primary_key=["id"])


def test_keys_given_as_a_bare_string_are_a_clear_error():
    with pytest.raises(ResourceDefinitionError, match=r"list of column names.*\['number'\]"):
        _define(keys="number")


def test_unknown_volatility_is_an_error():
    with pytest.raises(ResourceDefinitionError, match="unknown volatility 'sometimes'"):
        _define(volatility="sometimes")


def test_duplicate_column_is_an_error():
    with pytest.raises(ResourceDefinitionError, match="column 'a' appears twice"):
        _define(columns=[("a", "text"), ("a", "bigint")])


def test_duplicate_column_through_an_alias_is_an_error():
    class Clash(BaseModel):
        a: int
        b: int = Field(alias="a")

    with pytest.raises(ResourceDefinitionError, match="appears twice"):
        _define(schema=Clash)


def test_schema_and_columns_together_are_an_error():
    with pytest.raises(ResourceDefinitionError, match="schema or columns, not both"):
        _define(schema=Pr, columns=[("a", "text")])


def test_a_column_name_must_be_an_identifier():
    class Shouty(BaseModel):
        Title: str

    with pytest.raises(ResourceDefinitionError, match="column name 'Title'"):
        _define(schema=Shouty)


def test_reserved_words_are_accepted_as_names():
    r = _define("time", columns=[("user", "text"), ("order", "bigint")], keys=["user"])
    assert r.name == "time"
    assert r.column_names == ("user", "order")


def test_required_keys_are_not_null():
    class Hit(BaseModel):
        query: str | None = None
        title: str

    r = _define(schema=Hit, keys=["query"])
    assert r.column("query").nullable is False
    assert r.column("title").nullable is False  # required in the model
    assert _define(schema=Hit).column("query").nullable is True


def test_required_keys_given_as_columns_are_not_null():
    r = _define(columns=[("q", "text"), ("n", "bigint")], keys=["q"])
    assert r.column("q").nullable is False
    assert r.column("n").nullable is True


def test_columns_may_be_tuples_dicts_or_column_objects():
    r = _define(columns=[
        ("a", "bigint"),
        {"name": "b", "type": "date", "description": "when"},
        Column("c", "jsonb"),
    ])
    assert [(c.name, c.pg_type) for c in r.columns] == [
        ("a", "bigint"), ("b", "date"), ("c", "jsonb")]
    assert r.column("b").description == "when"
    assert r.column("a").convert("7") == 7


def test_verbs_are_listed_in_statement_order():
    r = _define(delete=_select, insert=_select, select=_select)
    assert r.verbs == ("select", "insert", "delete")
    assert r.resolver("insert") is _select
    assert r.resolver("update") is None
    assert r.resolver("drop") is None
