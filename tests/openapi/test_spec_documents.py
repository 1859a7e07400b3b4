"""Documents of each kind make the same tables: Swagger 2.0 in YAML, its definitions in
another file (``zoo/``), read from a path relative to the config file, its server from
``host`` + ``basePath``; ``allOf`` merged, ``additionalProperties`` as jsonb, an enum's
values in the column's comment. Over the wire, against the tests' own HTTP server."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ..fix_server import rows
from .fix_api import api_served, tables_of

ZOO = Path(__file__).with_name("zoo")



@pytest.fixture
async def zoo(sidecar: Any, tmp_path: Path) -> Any:
    async with api_served() as api:
        specs = tmp_path / "specs"
        specs.mkdir()
        for f in ZOO.iterdir():  # the document names the server it is served by
            (specs / f.name).write_text(f.read_text().replace("HOST", urlsplit(api.url).netloc))
        async with tables_of(api, sidecar, base=tmp_path, namespace="zoo",
                             spec="specs/swagger.yaml") as tables:
            yield tables


async def test_swagger_yaml_with_definitions_in_another_file(zoo):
    async with await zoo.connect() as conn:
        assert await rows(conn, "SELECT column_name, data_type, is_nullable FROM "
                          "information_schema.columns WHERE table_name = 'zoo_list_animals' "
                          "ORDER BY ordinal_position") == [
            ("name", "text", "NO"), ("species", "text", "NO"), ("traits", "jsonb", "YES"),
            ("id", "bigint", "NO"), ("born", "timestamp with time zone", "YES")]
        [(filters, verbs, columns)] = await rows(
            conn, "SELECT filters, verbs, columns FROM scratchpad.resources WHERE name = "
            "'zoo_list_animals'")
        assert (filters, verbs) == ("species, id", "select, insert")
        assert "name text, not null: What it answers to" in columns
        assert "one of: cat, dog" in columns
        assert await rows(conn, "SELECT id, name, traits FROM zoo_list_animals ORDER BY id") == [
            (1, "tom", {"lives": 9}), (2, "rex", {})]
        assert await rows(conn, "SELECT name FROM zoo_list_animals WHERE species = 'dog'") == [
            ("rex",)]
        assert await rows(conn, "SELECT name FROM zoo_list_animals WHERE id = 1") == [("tom",)]
        # The body parameter is the insert's: its columns go, the created row returns.
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO zoo_list_animals (name, species, traits) VALUES "
                           "('kit', 'cat', '{\"lives\": 7}')")
        # Read before COMMIT, the staged row is there; its id, which the API gives, is
        # not known yet: NULL, though the column is NOT NULL for the API's own rows.
        assert await rows(conn, "SELECT id, name FROM zoo_list_animals ORDER BY id") == [
            (1, "tom"), (2, "rex"), (None, "kit")]
        await conn.execute("COMMIT")
    gets = [p for m, p, _, _ in zoo.api.rec.requests if m == "GET"]
    assert gets == ["/zoo/v1/animals"] * 2 + ["/zoo/v1/animals/1", "/zoo/v1/animals"]
    assert zoo.api.rec.animals[3].name == "kit"
    assert zoo.api.rec.animals[3].traits == {"lives": 7}


async def test_names_without_an_operation_id_come_from_the_path(zoo):
    async with await zoo.connect() as conn:
        names = [n for (n,) in await rows(conn, "SELECT name FROM scratchpad.resources "
                                          "ORDER BY name")]
        long = next(n for n in names if n.startswith("zoo_get_keepers"))
        assert names == ["zoo_get_animals_photos", long, "zoo_list_animals"]
        # 63 bytes at most, cut with a hash of the whole: the same name every start.
        assert long == "zoo_get_keepers_feeding_schedules_weekly_rotation_assi_3de53b45"
        assert await rows(conn, "SELECT url FROM zoo_get_animals_photos WHERE "
                          "animal_id = 2 ORDER BY 1") == [
            ("https://zoo.example/2/1.jpg",), ("https://zoo.example/2/2.jpg",)]
        assert await rows(conn, f"SELECT keeper FROM {long}") == [("ann",)]
