"""Resources made from what upstreams say (``resources/_sources.py``): text Postgres refuses
is taken out of a table's descriptions with a warning naming the source and the table, and
of two sources that make a table of one name, the earlier keeps it and the later's is left
out, naming both."""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Resource, define_resource
from glove_scratchpad.resources._sources import merge, scrubbed


class Row(BaseModel):
    id: int = Field(description="the id\x00 of a row")


def _table(name: str, description: str = "rows") -> Resource:
    return define_resource(name, schema=Row, description=description, volatility="volatile",
                           select=lambda b: [])


def test_text_postgres_refuses_is_taken_out_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        (clean,) = scrubbed([_table("t", "bad\x00 text")], "MCP server 'x'")
    assert clean.description == "bad text"
    assert [c.description for c in clean.columns] == ["the id of a row"]
    assert "MCP server 'x'" in caplog.text and "table t" in caplog.text
    assert "table comment, column id" in caplog.text


def test_the_earlier_source_keeps_a_name_two_sources_make(caplog):
    first, second, other = _table("t", "first"), _table("t", "second"), _table("u")
    with caplog.at_level(logging.WARNING):
        served, left_out = merge([("API 'a'", [first]), ("API 'b'", [second, other])])
    assert [r.description for r in served] == ["first", "rows"]
    assert left_out == ["API 'b': table t is not served: API 'a' already has a table of "
                        "that name"]
