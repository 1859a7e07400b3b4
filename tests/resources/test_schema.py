"""JSON Schema to Postgres types, and any name as a SQL identifier (``resources/_schema.py``):
a name a model can write unquoted, never a system column's; a walk of references bounded
however they nest."""

from __future__ import annotations

import pytest

from glove_scratchpad.resources._schema import (
    MAX_IDENTIFIER,
    SchemaTooLarge,
    resolve,
    schema_type,
    sql_name,
    walking,
)


def test_a_name_becomes_an_identifier_a_model_writes_unquoted():
    assert sql_name("pullRequest URL", fallback="x") == "pull_request_url"
    assert sql_name("xmin", fallback="x") == "xmin_"  # a system column's name
    assert sql_name("select", fallback="x", reserved=frozenset({"select"})) == "select_"
    assert sql_name("2fa", fallback="x") == "_2fa"
    assert sql_name("!!!", fallback="col") == "col"
    taken: set[str] = set()
    assert [sql_name("id", fallback="x", taken=taken) for _ in range(3)] == [
        "id", "id_2", "id_3"]
    assert len(sql_name("a" * 200, fallback="x")) <= MAX_IDENTIFIER


def test_types_of_schemas():
    assert schema_type({"type": "integer"}) == "bigint"
    assert schema_type({"type": "string", "format": "date-time"}) == "timestamp with time zone"
    assert schema_type({"type": "object"}) == "jsonb"


def test_a_billion_laughs_of_references_is_refused():
    defs = {f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 10} for i in range(30)}
    defs["l30"] = {"type": "string"}
    root = {"$defs": defs}
    with walking(), pytest.raises(SchemaTooLarge):
        resolve({"$ref": "#/$defs/l0"}, root)
