"""A statement's plan is frozen (``server/sql/plan.py``): it is kept with its text and
shared by every run, so neither it nor its references change once made; a join's feed
gives the fed reference its key as part of the frozen record. No sidecar."""

from __future__ import annotations

import dataclasses

import pytest

from glove_scratchpad.resources import define_resource
from glove_scratchpad.server.sql.analysis import analyze
from glove_scratchpad.server.sql.parse import parse

_RESOURCES = {r.name: r for r in (
    define_resource("a", columns=[("k", "text"), ("x", "text")], keys=["k"],
                    volatility="volatile", select=lambda b: []),
    define_resource("b", columns=[("id", "bigint"), ("k", "text")], keys=["k"],
                    primary_key=["id"], filters=["id"], volatility="volatile",
                    select=lambda b: [], update=lambda rows, b: rows),
)}


def plan(sql: str):  # type: ignore[no-untyped-def]
    stmt = parse(sql)[0]
    return analyze(stmt.sql, stmt.node, lambda schema, name: _RESOURCES.get(name))


def test_a_fed_key_is_part_of_the_frozen_reference():
    p = plan("SELECT * FROM a JOIN b ON b.k = a.x WHERE a.k = 'v' AND b.id > 2")
    a, b = p.references
    assert [pr.column for pr in a.predicates] == ["k"]
    assert [pr.column for pr in b.predicates] == ["k"]  # fed by a's rows
    assert "SELECT DISTINCT" in b.predicates[0].values[0].sql
    assert [(c.column, c.op) for c in b.conditions] == [("id", ">")]
    for ref in p.references:
        for part in (ref.predicates, ref.conditions, ref.unbound, ref.lookups):
            assert isinstance(part, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.predicates = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.references = ()  # type: ignore[misc]


def test_a_writes_target_is_its_frozen_reference():
    p = plan("UPDATE b SET k = 'w' WHERE id = 1 AND k = 'v'")
    assert p.target is p.references[0] and p.target.access == "write"
    assert sorted(pr.column for pr in p.target.predicates) == ["id", "k"]
    assert p.reads == ()


def test_the_same_text_plans_to_equal_plans():
    sql = "SELECT * FROM a JOIN b ON b.k = a.x WHERE a.k = 'v'"
    assert plan(sql).references == plan(sql).references
