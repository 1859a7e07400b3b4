"""Overrides for a wrong document, over the wire, on an API of the test's own whose
document (FastAPI's, from its models) says more than its answers keep: a required
field left out, null in a never-null one, a number sent as a string. An entry named
after the automatic table amends it; the item's parameter ``{thing}`` is each row's
``id``."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from fastapi import FastAPI, Response
from pydantic import BaseModel

from ..fix_http import http_served
from ..fix_server import rows
from .fix_api import Api, tables_of

ROWS = [{"id": 1, "label": "one", "weight": 3},
        {"id": 2, "label": None, "weight": "4"},  # null, and a number as a string
        {"id": 3, "label": "three"}]  # no weight at all


class Thing(BaseModel):
    id: int
    label: str
    weight: int


def _app(log: list[tuple[str, str]]) -> FastAPI:
    app = FastAPI(title="Things")
    things = {r["id"]: r for r in ROWS}

    @app.get("/things", operation_id="things", response_model=list[Thing])
    def listed() -> Any:
        log.append(("GET", "/things"))
        return Response(json.dumps(list(things.values())), media_type="application/json")

    @app.get("/things/{thing}", operation_id="thing", response_model=Thing)
    def one(thing: int) -> Any:
        log.append(("GET", f"/things/{thing}"))
        return Response(json.dumps(things[thing]), media_type="application/json")

    @app.delete("/things/{thing}", operation_id="dropThing", status_code=204)
    def drop(thing: int) -> Response:
        log.append(("DELETE", f"/things/{thing}"))
        things.pop(thing)
        return Response(status_code=204)

    return app


AMENDED = {"name": "things", "columns": {"label": {"nullable": True},
                                         "weight": {"nullable": True, "type": "text"}}}


async def test_an_entry_named_after_an_automatic_table_amends_it(sidecar):
    log: list[tuple[str, str]] = []
    async with http_served(_app(log)) as url:
        api = Api(url, None)  # type: ignore[arg-type]
        async with tables_of(api, sidecar) as t, await t.connect() as conn:
            with pytest.raises(psycopg.errors.ExternalRoutineException, match='"label"'):
                await conn.execute("SELECT * FROM t_things")
        async with tables_of(api, sidecar, tables=[AMENDED]) as t, await t.connect() as conn:
            assert await rows(conn, "SELECT name FROM scratchpad.resources WHERE "
                              "namespace = 't'") == [("t_things",)]  # amended, not added
            assert await rows(conn, "SELECT id, label, weight FROM t_things ORDER BY id") == [
                (1, "one", "3"), (2, None, "4"), (3, "three", None)]
            log.clear()
            cur = await conn.execute("DELETE FROM t_things WHERE label IS NULL OR "
                                     "weight IS NULL")
            assert cur.statusmessage == "DELETE 2"
            assert sorted(m for m in log if m[0] == "DELETE") == [
                ("DELETE", "/things/2"), ("DELETE", "/things/3")]
