"""Resource.validate_rows (``_rows.RowValidator``): what a resolver returns, checked
against the resource's schema or columns, as dicts by column name."""

import datetime as dt

import pytest
from pydantic import BaseModel, Field

from glove_scratchpad.errors import ExternalRoutineError
from glove_scratchpad.resources import define_resource


class Pr(BaseModel):
    number: int = Field(description="PR number")
    title: str
    merged: bool = False
    opened: dt.date | None = None


def _prs(**kw):
    return define_resource("github_pr", schema=Pr, volatility="stable",
                           select=lambda b: [], **kw)


# -- validate_rows ------------------------------------------------------------


def test_models_and_dicts_are_accepted_as_rows():
    rows = _prs().validate_rows([Pr(number=1, title="a"),
                                 {"number": 2, "title": "b", "merged": True}])
    assert rows == [
        {"number": 1, "title": "a", "merged": False, "opened": None},
        {"number": 2, "title": "b", "merged": True, "opened": None},
    ]


def test_a_single_model_or_dict_is_one_row():
    r = _prs()
    assert r.validate_rows(Pr(number=1, title="a"))[0]["number"] == 1
    assert r.validate_rows({"number": 2, "title": "b"})[0]["number"] == 2


def test_none_and_generators_are_rows():
    r = _prs()
    assert r.validate_rows(None) == []
    assert len(r.validate_rows({"number": i, "title": "t"} for i in range(3))) == 3


def test_values_are_converted_to_the_schema_types():
    (row,) = _prs().validate_rows([{"number": "3", "title": "t", "opened": "2024-05-01"}])
    assert row["number"] == 3
    assert row["opened"] == dt.date(2024, 5, 1)


def test_a_wrong_type_names_resource_column_and_value():
    with pytest.raises(ExternalRoutineError) as err:
        _prs().validate_rows([{"number": "not-a-number", "title": "t"}])
    message = err.value.message
    assert 'resource "github_pr"' in message
    assert '"number"' in message
    assert "not-a-number" in message
    assert err.value.sqlstate == "38000"


def test_a_wrong_type_in_a_model_instance_is_not_a_silent_null():
    bad = Pr.model_construct(number="abc", title="t", merged=False, opened=None)
    with pytest.raises(ExternalRoutineError, match=r'"number".*abc'):
        _prs().validate_rows([bad])


def test_a_missing_required_field_is_an_error():
    with pytest.raises(ExternalRoutineError, match='without column "title"') as err:
        _prs().validate_rows([{"number": 1}])
    assert err.value.detail.startswith("row 1:")


def test_required_keys_missing_from_rows_are_filled_from_the_stamp():
    r = _prs(keys=["number"])
    rows = r.validate_rows([{"title": "a"}, {"number": None, "title": "b"}], {"number": 9})
    assert [row["number"] for row in rows] == [9, 9]


def test_the_stamp_does_not_overwrite_a_returned_value():
    rows = _prs(keys=["number"]).validate_rows([{"number": 1, "title": "a"}], {"number": 9})
    assert rows[0]["number"] == 1


def test_a_non_iterable_return_is_a_clear_error():
    with pytest.raises(ExternalRoutineError, match='resource "github_pr" returned int, not rows'):
        _prs().validate_rows(5)


def test_a_row_that_is_not_a_model_or_dict_is_a_clear_error():
    with pytest.raises(ExternalRoutineError, match="not a model or a dict"):
        _prs().validate_rows([("1", "t")])


# -- rows of a resource declared by columns ------------------------------------------


def _by_columns():
    return define_resource("counts", columns=[("name", "text"), ("n", "bigint")],
                           keys=["name"], volatility="stable", select=lambda b: [])


def test_column_rows_are_converted_and_missing_columns_are_null():
    rows = _by_columns().validate_rows([{"name": "a", "n": "2"}, {"name": "b"}])
    assert rows == [{"name": "a", "n": 2}, {"name": "b", "n": None}]


def test_column_rows_with_a_wrong_type_name_resource_column_and_value():
    with pytest.raises(ExternalRoutineError,
                       match=r'resource "counts".*"n" \(bigint\): \'many\''):
        _by_columns().validate_rows([{"name": "a", "n": "many"}])


def test_column_rows_are_stamped_too():
    assert _by_columns().validate_rows([{"n": 1}], {"name": "a"}) == [{"name": "a", "n": 1}]


def test_a_bad_row_past_the_first_chunk_is_named_by_its_number():
    rows = [{"number": i, "title": "t"} for i in range(1000)]
    rows[700] = {"number": 700}
    with pytest.raises(ExternalRoutineError, match='without column "title"') as err:
        _prs().validate_rows(rows)
    assert err.value.detail.startswith("row 701:")
