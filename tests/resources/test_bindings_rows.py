"""Bindings: what a resolver receives (its validated rows: test_rows.py)."""

import pytest

from glove_scratchpad.errors import MissingRequiredKey
from glove_scratchpad.resources import Bindings

# -- Bindings ---------------------------------------------------------------


def test_one_returns_the_single_value():
    assert Bindings({"number": [7]}).one("number") == 7


@pytest.mark.parametrize("values", [{}, {"number": []}, {"number": [1, 2]}])
def test_one_without_exactly_one_value_is_missing_required_key(values):
    with pytest.raises(MissingRequiredKey) as err:
        Bindings(values, "github_pr").one("number")
    assert 'resource "github_pr"' in err.value.message
    assert '"number"' in err.value.message
    assert err.value.hint and "WHERE number =" in err.value.hint
    assert err.value.sqlstate == "22023"


def test_all_returns_every_value_or_none():
    b = Bindings({"number": (1, 2)})
    assert b.all("number") == [1, 2]
    assert b.all("title") == []


def test_has_tells_whether_a_column_was_bound():
    b = Bindings({"number": [1]})
    assert b.has("number")
    assert not b.has("title")


def test_get_returns_the_value_or_the_default():
    b = Bindings({"number": [1]})
    assert b.get("number") == 1
    assert b.get("title") is None
    assert b.get("title", "x") == "x"


def test_bindings_compare_and_hash_by_value():
    assert Bindings({"a": [1]}) == Bindings({"a": (1,)})
    assert hash(Bindings({"a": [1]})) == hash(Bindings({"a": (1,)}))
    assert Bindings({"a": [1, 2]}).as_dict() == {"a": [1, 2]}
