"""The world's people and scores served over HTTP (FastAPI), for its ``api_`` tables.

The server makes ``api_list_people`` and ``api_list_scores`` from this API's own
OpenAPI document (``[[openapi.apis]]`` namespace ``api``), so the differential check
covers tables of an HTTP API as it covers Python resources:

- ``GET /people`` pages by page and per_page (at most 25 a page) and applies its
  optional ``city`` and ``name`` exactly as SQL's ``=`` does; ``GET /people/{person_id}``
  is its item (a 404 for no such person): one list-and-get table.
- ``GET /tags`` applies ``tag`` (an enum, the rows' own field) and ``person_id`` (an
  array parameter: the rows of any of its values); each row has a free-form object.
- ``GET /people/{person_id}/card`` answers JSON its document gives no schema, and has
  the operationId FastAPI makes itself (``get_card_people__person_id__card_get``).
- ``GET /people/{person_id}/scores`` pages by cursor (``after``, at most 2 a page, the
  next cursor in the body): a required key, duplicate rows.

(No ``from __future__ import annotations``: FastAPI reads the annotations at run time.)
"""

import datetime as dt
from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from .world import TAGS, World, card

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


class Tag(BaseModel):
    person_id: int
    tag: Literal[tuple(TAGS)]  # type: ignore[valid-type]
    extra: dict[str, Any]


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

    @app.get("/people/{person_id}/card", response_model=None)
    def get_card(person_id: int) -> JSONResponse:
        found = next((p for p in people() if p["id"] == person_id), None)
        if found is None:
            raise HTTPException(404, "no such person")
        return JSONResponse(card(found))

    @app.get("/tags", operation_id="listTags")
    def list_tags(tag: Annotated[Literal[tuple(TAGS)] | None,  # type: ignore[valid-type]
                                 Query(description="Only the rows of this tag")] = None,
                  person_id: Annotated[list[int] | None, Query()] = None) -> list[Tag]:
        return [Tag(**t) for t in world.rows["api_list_tags"]
                if tag in (None, t["tag"]) and (not person_id or t["person_id"] in person_id)]

    return app
