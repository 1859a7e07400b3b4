"""The world's people and scores served over HTTP (FastAPI), for its ``api_`` tables.

The server makes ``api_list_people`` and ``api_list_scores`` from this API's own
OpenAPI document (``[[openapi.apis]]`` namespace ``api``), so the differential check
covers tables of an HTTP API as it covers Python resources:

- ``GET /people`` pages by page and per_page (at most 25 a page) and applies its
  optional ``city`` and ``name`` exactly as SQL's ``=`` does; ``GET /people/{person_id}``
  is its item (a 404 for no such person): one list-and-get table.
- ``GET /people/{person_id}/scores`` pages by cursor (``after``, at most 2 a page, the
  next cursor in the body): a required key, duplicate rows.

(No ``from __future__ import annotations``: FastAPI reads the annotations at run time.)
"""

import datetime as dt
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query
from pydantic import BaseModel

from .world import World

PEOPLE_PAGE = 25
SCORES_PAGE = 2


class Person(BaseModel):
    id: int
    name: str
    age: int | None
    city: str | None
    joined: dt.date
    seen: dt.datetime | None


class Score(BaseModel):
    person_id: int
    subject: str
    points: int | None


class Scores(BaseModel):
    items: list[Score]
    next_cursor: str | None = None


def make_app(world: World) -> FastAPI:
    app = FastAPI(title="People")

    def people() -> list[dict[str, Any]]:
        return world.rows["api_list_people"]

    @app.get("/people", operation_id="listPeople")
    def list_people(city: str | None = None, name: str | None = None, page: int = 1,
                    per_page: Annotated[int, Query(ge=1, le=PEOPLE_PAGE)] = PEOPLE_PAGE
                    ) -> list[Person]:
        rows = [p for p in people() if city in (None, p["city"]) and name in (None, p["name"])]
        return [Person(**p) for p in rows[(page - 1) * per_page:page * per_page]]

    @app.get("/people/{person_id}", operation_id="getPerson")
    def get_person(person_id: int) -> Person:
        found = next((p for p in people() if p["id"] == person_id), None)
        if found is None:
            raise HTTPException(404, "no such person")
        return Person(**found)

    @app.get("/people/{person_id}/scores", operation_id="listScores")
    def list_scores(person_id: int, after: int = 0,
                    limit: Annotated[int, Query(ge=1, le=SCORES_PAGE)] = SCORES_PAGE
                    ) -> Scores:
        rows = [s for s in world.rows["api_list_scores"] if s["person_id"] == person_id]
        page = rows[after:after + limit]
        more = after + limit < len(rows)
        return Scores(items=[Score(**s) for s in page],
                      next_cursor=str(after + limit) if more else None)

    return app
