"""Resources made real in the sidecar (``catalog/_catalog.py``), through the wire: each is a
shell table whose columns are the model's, with Postgres types, and whose comment says what
it is, how it is read and how it changes, as a client's schema browser reads them."""

from __future__ import annotations

from ..sql.fix_answers import answer


async def test_a_resource_is_a_table_of_its_models_columns(server):
    assert await answer(server, "SELECT column_name, data_type FROM information_schema.columns"
                                " WHERE table_name = 'items' ORDER BY ordinal_position") == [
        ("id", "bigint"), ("name", "text"), ("price", "double precision")]


async def test_its_comment_says_what_it_is(server):
    assert await answer(server, "SELECT obj_description('items'::regclass)") == [
        ("A hundred items. Verbs: select. Volatility: immutable.",)]
