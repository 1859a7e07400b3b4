"""An HTTP API of the tests' own (FastAPI), with a behaviour for each mapping rule.

FastAPI writes its OpenAPI 3.1 document at ``/openapi.json``; the tests point the
server at it. Every request is logged in ``Recorder.requests`` (method, path, query,
the headers that matter), so a test can say how many requests a statement made.

- ``/things`` and ``/things/{thing_id}``: a list-and-get table with writes (POST,
  PATCH, DELETE), an enum, nested objects, a map, dates; paged by page and
  per_page; ``kind`` filters, ``tag`` is an array parameter.
- ``/labels`` and ``PATCH /labels/{name}``: an update whose path parameter and body
  field are both ``name``.
- ``/link/items``, ``/cursor/items``, ``/offset/items``, ``/page/items``: 10,000
  items under each paging style.
- ``/odd/items``: 250 items paged by names no rule knows (``start_at``, ``how_many``,
  the next page's relative URL at ``continue_at``): a hand table declares it.
- ``/flaky/items``: 429 with Retry-After before it answers; ``/broken/items``: 503;
  ``/slow/items``: a second before it answers.
- ``/secure/items``: a bearer token, 401 without one, 403 for a reader's DELETE.
- ``/files/{path}``: a folder's entries, each with a ``path`` of its own.
- ``/search``: a POST that reads; ``/shapes/...``: one object, a union, a recursive
  tree, rows that are a union; ``/liar/items``: rows without a field the document
  requires.
- ``/zoo/v1/...``: left out of FastAPI's document; ``zoo/swagger.yaml`` (Swagger 2.0,
  YAML, its definitions in another file) describes it.
"""

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

ITEMS = 10_000
ODD = 250
EPOCH = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
TOKENS = {"ann-token": "writer", "bob-token": "reader"}


class Owner(BaseModel):
    login: str
    admin: bool = False


class Thing(BaseModel):
    id: int
    name: str
    kind: Literal["tool", "toy"]
    tags: list[str] = []
    meta: dict[str, int] = {}
    owner: Owner | None = None
    made_at: dt.datetime


class ThingIn(BaseModel):
    name: str
    kind: Literal["tool", "toy"] = "tool"
    tags: list[str] = []


class ThingPatch(BaseModel):
    name: str | None = None
    kind: Literal["tool", "toy"] | None = None


class Item(BaseModel):
    n: int
    label: str


class CursorPage(BaseModel):
    items: list[Item]
    next_cursor: str | None = None


class OffsetPage(BaseModel):
    data: list[Item]
    total: int


class OddPage(BaseModel):
    rows: list[Item]
    continue_at: str | None = None


class Entry(BaseModel):
    path: str
    size: int


class Folder(BaseModel):
    entries: list[Entry]


class SearchIn(BaseModel):
    q: str
    limit: int | None = None


class Hit(BaseModel):
    title: str
    score: float


class SearchOut(BaseModel):
    results: list[Hit]


class Label(BaseModel):
    name: str
    color: str


class LabelPatch(BaseModel):
    name: str | None = None
    color: str | None = None


class Tree(BaseModel):
    name: str
    children: list["Tree"] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Cat | Dog
    name: str


class Animal(BaseModel):
    id: int
    name: str
    species: Literal["cat", "dog"]
    traits: dict[str, int] = {}
    born: dt.datetime


class NewAnimal(BaseModel):
    name: str
    species: Literal["cat", "dog"]
    traits: dict[str, int] = {}


@dataclass
class Recorder:
    """What the API was asked, and the state its writes change. (This module has no
    ``from __future__ import annotations``: FastAPI reads its annotations at run time.)"""

    requests: list[tuple[str, str, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    things: dict[int, Thing] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)
    animals: dict[int, Animal] = field(default_factory=dict)
    flaky_left: int = 0  # 429s still to answer before /flaky/items succeeds

    def reset(self) -> None:
        self.requests.clear()
        self.flaky_left = 0
        self.labels = {n: Label(name=n, color=c) for n, c in (("bug", "red"), ("ui", "blue"))}
        self.things = {i: Thing(id=i, name=f"thing {i}", kind="tool" if i % 2 else "toy",
                                tags=["a"] if i % 3 else ["a", "b"], meta={"weight": i},
                                owner=Owner(login="ann" if i < 4 else "bob"),
                                made_at=EPOCH + dt.timedelta(days=i))
                       for i in range(1, 8)}
        self.animals = {1: Animal(id=1, name="tom", species="cat", traits={"lives": 9},
                                  born=EPOCH),
                        2: Animal(id=2, name="rex", species="dog", born=EPOCH)}

    def count(self, path: str, method: str = "GET") -> int:
        return sum(1 for m, p, _, _ in self.requests if p == path and m == method)


def _item(n: int) -> Item:
    return Item(n=n, label=f"item {n}")


def make_app() -> tuple[FastAPI, Recorder]:
    app = FastAPI(title="Test API")
    rec = Recorder()
    rec.reset()
    bearer = HTTPBearer(auto_error=False)

    @app.middleware("http")
    async def log(request: Request, call_next: Any) -> Any:
        kept = {k: v for k, v in request.headers.items()
                if k in ("authorization", "idempotency-key")}
        rec.requests.append((request.method, request.url.path,
                             dict(request.query_params.multi_items()), kept))
        return await call_next(request)

    # -- things: list and get, and writes ------------------------------------------------

    @app.get("/things", operation_id="listThings")
    def list_things(kind: Literal["tool", "toy"] | None = None,
                    tag: Annotated[list[str] | None, Query()] = None,
                    page: int = 1, per_page: Annotated[int, Query(le=50)] = 20) -> list[Thing]:
        rows = [t for t in rec.things.values() if (kind is None or t.kind == kind)
                and (not tag or set(tag) & set(t.tags))]
        return rows[(page - 1) * per_page:page * per_page]

    @app.get("/things/{thing_id}", operation_id="getThing")
    def get_thing(thing_id: int) -> Thing:
        if thing_id not in rec.things:
            raise HTTPException(404, "no such thing")
        return rec.things[thing_id]

    @app.post("/things", operation_id="createThing", status_code=201)
    def create_thing(body: ThingIn, idempotency_key: Annotated[str | None, Header()] = None
                     ) -> Thing:
        new = Thing(id=max(rec.things, default=0) + 1, made_at=EPOCH, **body.model_dump())
        rec.things[new.id] = new
        return new

    @app.patch("/things/{thing_id}", operation_id="updateThing")
    def update_thing(thing_id: int, body: ThingPatch) -> Thing:
        thing = rec.things.get(thing_id)
        if thing is None:
            raise HTTPException(404, "no such thing")
        rec.things[thing_id] = thing.model_copy(update=body.model_dump(exclude_none=True))
        return rec.things[thing_id]

    @app.delete("/things/{thing_id}", operation_id="deleteThing", status_code=204)
    def delete_thing(thing_id: int) -> Response:
        rec.things.pop(thing_id, None)
        return Response(status_code=204)

    # -- labels: an update whose SET and WHERE name the same column -----------------------

    @app.get("/labels", operation_id="listLabels")
    def list_labels() -> list[Label]:
        return list(rec.labels.values())

    @app.patch("/labels/{name}", operation_id="updateLabel")
    def update_label(name: str, body: LabelPatch) -> Label:
        label = rec.labels.pop(name, None)
        if label is None:
            raise HTTPException(404, "no such label")
        label = label.model_copy(update=body.model_dump(exclude_none=True))
        rec.labels[label.name] = label
        return label

    # -- paging styles -------------------------------------------------------------------

    @app.get("/link/items", operation_id="linkItems",
             responses={200: {"headers": {"Link": {"schema": {"type": "string"}}}}})
    def link_items(request: Request, response: Response, after: int = 0,
                   limit: Annotated[int, Query(le=500)] = 100,
                   signature: Annotated[str | None, Query(include_in_schema=False)] = None
                   ) -> list[Item]:
        rows = [_item(n) for n in range(after + 1, min(after + limit, ITEMS) + 1)]
        if rows and rows[-1].n < ITEMS:
            # A next link carries a signature, as a storage API's may: never shown.
            nxt = request.url.include_query_params(after=rows[-1].n, limit=limit,
                                                   signature="next-page-s3cr3t")
            response.headers["Link"] = f'<{nxt}>; rel="next"'
        return rows

    @app.get("/cursor/items", operation_id="cursorItems")
    def cursor_items(cursor: str | None = None,
                     limit: Annotated[int, Query(le=500)] = 100) -> CursorPage:
        start = int(cursor or 0)
        rows = [_item(n) for n in range(start + 1, min(start + limit, ITEMS) + 1)]
        more = rows and rows[-1].n < ITEMS
        return CursorPage(items=rows, next_cursor=str(rows[-1].n) if more else None)

    @app.get("/offset/items", operation_id="offsetItems")
    def offset_items(offset: int = 0, limit: Annotated[int, Query(le=500)] = 100
                     ) -> OffsetPage:
        return OffsetPage(data=[_item(n) for n in range(offset + 1,
                                                         min(offset + limit, ITEMS) + 1)],
                          total=ITEMS)

    @app.get("/page/items", operation_id="pageItems")
    def page_items(page: int = 1, per_page: Annotated[int, Query(le=500)] = 100
                   ) -> list[Item]:
        start = (page - 1) * per_page
        return [_item(n) for n in range(start + 1, min(start + per_page, ITEMS) + 1)]

    @app.get("/odd/items", operation_id="oddItems")
    def odd_items(start_at: int = 0, how_many: Annotated[int, Query(le=100)] = 100
                  ) -> OddPage:
        rows = [_item(n) for n in range(start_at + 1, min(start_at + how_many, ODD) + 1)]
        more = start_at + how_many < ODD
        return OddPage(rows=rows, continue_at=f"/odd/items?start_at={start_at + how_many}"
                       f"&how_many={how_many}" if more else None)

    # -- failures ------------------------------------------------------------------------

    @app.get("/slow/items", operation_id="slowItems")
    async def slow_items() -> list[Item]:
        await asyncio.sleep(1.0)
        return [_item(1)]

    @app.get("/flaky/items", operation_id="flakyItems")
    def flaky_items(response: Response) -> list[Item]:
        if rec.flaky_left > 0:
            rec.flaky_left -= 1
            raise HTTPException(429, "slow down", headers={"Retry-After": "0.2"})
        return [_item(1), _item(2)]

    @app.get("/broken/items", operation_id="brokenItems")
    def broken_items() -> list[Item]:
        raise HTTPException(503, "the backend is down")

    @app.get("/liar/items", operation_id="liarItems", response_model=list[Item])
    def liar_items() -> Response:
        return Response('[{"n": 1, "label": "one"}, {"n": 2}]', media_type="application/json")

    @app.get("/liar/nulls", operation_id="liarNulls", response_model=list[Item])
    def liar_nulls() -> Response:
        return Response('[{"n": 1, "label": null}]', media_type="application/json")

    # -- auth ----------------------------------------------------------------------------

    def role(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
             ) -> str:
        if credentials is None or credentials.credentials not in TOKENS:
            raise HTTPException(401, "bad or missing token")
        return TOKENS[credentials.credentials]

    @app.get("/secure/items", operation_id="secureItems")
    def secure_items(who: Annotated[str, Depends(role)]) -> list[Item]:
        return [_item(1)]

    @app.delete("/secure/items/{n}", operation_id="deleteSecureItem", status_code=204)
    def delete_secure_item(n: int, who: Annotated[str, Depends(role)]) -> Response:
        if who != "writer":
            raise HTTPException(403, "readers may not delete")
        return Response(status_code=204)

    # -- shapes --------------------------------------------------------------------------

    @app.get("/files/{path}", operation_id="listFolder")
    def list_folder(path: str) -> Folder:
        return Folder(entries=[Entry(path=f"{path}/{name}", size=len(name))
                               for name in ("a.txt", "b.txt")])

    @app.post("/search", operation_id="search")
    def search(body: SearchIn) -> SearchOut:
        hits = [Hit(title=f"{body.q} {i}", score=1 / i) for i in range(1, 6)]
        return SearchOut(results=hits[:body.limit] if body.limit else hits)

    @app.get("/shapes/tree", operation_id="tree")
    def tree() -> Tree:
        return Tree(name="root", children=[Tree(name="leaf")])

    @app.get("/shapes/pets", operation_id="pets")
    def pets() -> list[Pet]:
        return [Pet(name="tom", pet=Cat(kind="cat", lives=9)),
                Pet(name="rex", pet=Dog(kind="dog", good=True))]

    @app.get("/shapes/animals", operation_id="animals")
    def animals() -> list[Cat | Dog]:
        return [Cat(kind="cat", lives=9), Dog(kind="dog", good=True)]

    # -- the zoo: described by a Swagger 2.0 document of its own -------------------------

    @app.get("/zoo/v1/animals", include_in_schema=False)
    def zoo_animals(species: str | None = None) -> list[Animal]:
        return [a for a in rec.animals.values() if species in (None, a.species)]

    @app.get("/zoo/v1/animals/{animal_id}", include_in_schema=False)
    def zoo_animal(animal_id: int) -> Animal:
        if animal_id not in rec.animals:
            raise HTTPException(404, "no such animal")
        return rec.animals[animal_id]

    @app.get("/zoo/v1/animals/{animal_id}/photos", include_in_schema=False)
    def zoo_photos(animal_id: int) -> list[dict[str, str]]:
        return [{"url": f"https://zoo.example/{animal_id}/{i}.jpg"} for i in (1, 2)]

    @app.get("/zoo/v1/keepers/feeding-schedules/weekly-rotation-assignments-for-the-coming-"
             "season", include_in_schema=False)
    def zoo_rota() -> list[dict[str, str]]:
        return [{"keeper": "ann"}]

    @app.post("/zoo/v1/animals", include_in_schema=False, status_code=201)
    def zoo_add(body: NewAnimal) -> Animal:
        new = Animal(id=max(rec.animals) + 1, born=EPOCH, **body.model_dump())
        rec.animals[new.id] = new
        return new

    return app, rec
