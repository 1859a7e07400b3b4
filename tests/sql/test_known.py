"""The names a statement may use, as the engine hands them to the gate and the planner
(``server/sql/known.py``): what each (schema, name) means. No sidecar."""

from __future__ import annotations

import dataclasses

import pytest

from glove_scratchpad import errors
from glove_scratchpad.names import DEFAULT_SCHEMAS
from glove_scratchpad.server.sql import temp_tables
from glove_scratchpad.server.sql.analysis import analyze
from glove_scratchpad.server.sql.known import Known
from glove_scratchpad.server.sql.parse import parse

S = DEFAULT_SCHEMAS
RES, VIEW, CURSORS = object(), object(), object()
KNOWN = Known(S, {"things": RES}, {"staged": VIEW}, {"pg_cursors": CURSORS},
              frozenset({"score"}))


@pytest.mark.parametrize(("schema", "name", "meant"), [
    (None, "things", RES),
    (S.served, "things", RES),
    (S.system, "things", None),
    ("other", "things", None),
    (S.system, "staged", VIEW),
    (None, "staged", None),
    (None, "pg_cursors", CURSORS),
    ("pg_catalog", "pg_cursors", CURSORS),
    (S.served, "pg_cursors", None),
])
def test_a_name_means_a_resource_of_its_schema(schema, name, meant):
    assert KNOWN.resource(schema, name) is meant
    assert KNOWN.is_resource(schema, name) is (meant is not None)


def test_functions_are_served_in_their_schema_only():
    assert KNOWN.is_function(S.fns, "score")
    assert not KNOWN.is_function(S.served, "score")
    assert not KNOWN.is_function(S.fns, "other")


def test_temporary_tables_are_names_not_resources():
    assert KNOWN.with_temps(set()) is KNOWN  # no copy for a session with none
    with_t = KNOWN.with_temps({"scratch"})
    assert with_t.is_temp("scratch") and not with_t.is_resource(None, "scratch")
    assert with_t.with_temps(set()).temps == frozenset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        with_t.temps = frozenset()  # type: ignore[misc]


def test_the_gate_reads_the_record():
    [stmt] = parse("SELECT * FROM scratch JOIN things ON true")
    with pytest.raises(errors.UndefinedTable):
        temp_tables.check_known(stmt.node, KNOWN)
    temp_tables.check_known(stmt.node, KNOWN.with_temps({"scratch"}))
    [fn] = parse("SELECT fn.score(1)".replace("fn.", f"{S.fns}."))
    temp_tables.check_known(fn.node, KNOWN)
    with pytest.raises(errors.UndefinedFunction):
        temp_tables.check_known(fn.node, dataclasses.replace(KNOWN, functions=frozenset()))


def test_the_planner_reads_the_record():
    [stmt] = parse("SELECT * FROM things, staged")
    plan = analyze(stmt.sql, stmt.node, KNOWN.resource)
    assert [r.name for r in plan.references] == ["things"]
