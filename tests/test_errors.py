"""SQL errors as classes by SQLSTATE (``errors.py``): an ErrorResponse relayed from the
sidecar becomes the class of its code, else of its code's class, else ``SqlError``,
keeping every field, and an error shows its DETAIL and HINT the way psql does."""

from __future__ import annotations

from glove_scratchpad import errors


def test_a_relayed_error_becomes_the_class_of_its_code_keeping_every_field():
    fields = {"S": "ERROR", "V": "ERROR", "C": "42P01", "M": 'relation "x" does not exist',
              "H": "Look it up.", "P": "15", "t": "x"}
    error = errors.SqlError.from_fields(fields)
    assert type(error) is errors.UndefinedTable
    assert (error.sqlstate, error.position, error.hint) == ("42P01", 15, "Look it up.")
    assert error.as_fields() == fields


def test_an_unknown_code_falls_back_to_its_class_then_to_sql_error():
    assert errors.error_class("22023") is errors.InvalidParameterValue
    assert errors.error_class("22999") is errors.DataException
    assert errors.error_class("ZZ999") is errors.SqlError
    kept = errors.SqlError.from_fields({"C": "22999", "M": "odd"})
    assert isinstance(kept, errors.DataException) and kept.sqlstate == "22999"


def test_an_error_reads_as_psql_shows_it():
    error = errors.InvalidParameterValue("bad value", detail="it was 7", hint="Give 1 to 5.")
    assert str(error) == "bad value\nDETAIL:  it was 7\nHINT:  Give 1 to 5."
    assert repr(error) == "InvalidParameterValue(22023: 'bad value')"
