"""The differential check's world: resources backed by the same rows as plain tables.

Each resource below has a twin table, of the same name and columns, in a reference
database of plain Postgres. A statement run through the server over the resources
and run directly over the twins must give the same answer (``oracle.py``).

The resources cover what the planner treats differently:

- ``people``: a primary key, filters of every type (bigint, text, date,
  timestamptz, numeric), NULLs; a resolver that applies every condition it is
  given and the pushed LIMIT, exactly as SQL would (stable, kept 60 s: the fast path).
- ``scores``: a required key, no primary key, duplicate rows; a lazy resolver (a
  generator) (volatile).
- ``orders``: a primary key, filters that its resolver ignores (Postgres applies
  them), enough rows to be kept as a sidecar table (immutable).
- ``tags``: a required text key, no primary key, duplicates; an async generator
  (stable).
- ``events``: no key, no primary key, no filter; paged (an async generator that
  yields page after page, stopping at the pushed LIMIT), kept (immutable).
- ``notes``: writable (insert, update, delete) with a primary key that the tool
  assigns; volatile. Its store is the tool's truth; ``sync_sql`` makes the twin
  hold it again after a write fires.
- ``api_list_people`` and ``api_list_scores``: people (without balance) and scores
  again, as the tables of an HTTP API (``api.py``): filters the API applies, a
  list-and-get table, paging by page number and by cursor, a required path key.
- ``api_list_tags``: tags again, each with a free-form object (jsonb), as an HTTP
  API's table whose enum parameter is the rows' own field, and whose array parameter
  (``IN``: one call with the list) is too.
- ``api_get_card``: a person's card, a GET whose answer has no schema (its body one
  jsonb column) and whose operationId is FastAPI's own; no row for no one (a 404).

The rows are made from a seed, so a run is reproducible. Text values are lower-case
ASCII words, which sort the same in every collation: a resolver compares them in
Python, Postgres in the database's collation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import re
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from psycopg.types.json import Jsonb

from glove_scratchpad.resources import Bindings, Resource, define_resource

__all__ = ["CITIES", "COLUMNS", "KINDS", "NAMES", "STATUSES", "SUBJECTS", "TAGS", "World",
           "matches"]

CITIES = ["lima", "oslo", "rome", "kyiv", "pune", "york"]
STATUSES = ["open", "paid", "sent", "void"]
SUBJECTS = ["art", "math", "music", "history"]
TAGS = ["churn", "vip", "new", "trial", "beta"]
KINDS = ["click", "view", "buy", "share"]
NAMES = ["ada", "bea", "cai", "dov", "eli", "fay", "gus", "hal", "ida", "jon", "kim", "lea",
         "max", "ned", "ola", "pia", "quin", "rex", "sam", "tia", "uma", "vic", "wes", "zoe"]
EPOCH = dt.datetime(2024, 12, 30, tzinfo=dt.UTC)
PAGE = 50  # rows per page of the paged resource

# (name, Postgres type) of each table, in column order.
COLUMNS: dict[str, list[tuple[str, str]]] = {
    "people": [("id", "bigint"), ("name", "text"), ("age", "bigint"), ("city", "text"),
               ("joined", "date"), ("seen", "timestamp with time zone"),
               ("balance", "numeric")],
    "scores": [("person_id", "bigint"), ("subject", "text"), ("points", "bigint")],
    "orders": [("id", "bigint"), ("person_id", "bigint"), ("status", "text"),
               ("amount", "numeric"), ("at", "timestamp with time zone")],
    "tags": [("person_id", "bigint"), ("tag", "text")],
    "events": [("id", "bigint"), ("kind", "text"), ("person_id", "bigint"),
               ("at", "timestamp with time zone")],
    "notes": [("id", "bigint"), ("person_id", "bigint"), ("title", "text"),
              ("body", "text")],
    # The types the OpenAPI mapping gives api.py's document.
    "api_list_people": [("id", "bigint"), ("name", "text"), ("age", "bigint"),
                        ("city", "text"), ("joined", "date"),
                        ("seen", "timestamp with time zone")],
    "api_list_scores": [("person_id", "bigint"), ("subject", "text"), ("points", "bigint")],
    "api_list_tags": [("person_id", "bigint"), ("tag", "text"), ("extra", "jsonb")],
    "api_get_card": [("body", "jsonb"), ("person_id", "bigint")],
}


def card(person: dict[str, Any]) -> dict[str, Any]:
    """What the API's card of a person says (``api.py``): JSON with no schema."""
    return {"name": person["name"], "city": person["city"], "age": person["age"],
            "links": [f"/people/{person['id']}"]}


def _like(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """SQL LIKE as a regular expression (``\\`` escapes, ``%`` and ``_`` wildcards)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), flags | re.S)


def matches(value: Any, op: str, arg: Any) -> bool:
    """Whether a row's value meets one condition as SQL would (NULL meets none but
    ``is null``)."""
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return False
    if op == "in":
        return value in [a for a in arg if a is not None]
    if arg is None:
        return False
    if op == "like":
        return _like(arg).fullmatch(value) is not None
    if op == "ilike":
        return _like(arg, re.I).fullmatch(value) is not None
    return bool({"=": value == arg, "<>": value != arg, "<": value < arg,
                 "<=": value <= arg, ">": value > arg, ">=": value >= arg}[op])


def _meets(row: dict[str, Any], b: Bindings, columns: Sequence[str]) -> bool:
    return all(matches(row[c], op, v) for c in columns for op, v in b.where(c))


@dataclass
class World:
    """The rows of every table, made from ``seed``, and the resources over them."""

    seed: int = 1
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        people = []
        for i in range(1, 61):
            people.append({
                "id": i, "name": rng.choice(NAMES),
                "age": None if i % 11 == 0 else rng.randint(18, 70),
                "city": None if i % 7 == 0 else rng.choice(CITIES),
                "joined": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 400)),
                "seen": None if i % 13 == 0 else EPOCH + dt.timedelta(hours=rng.randint(-72, 72)),
                "balance": decimal.Decimal(rng.randint(-5000, 50000)) / 100})
        scores = []
        for person in people:
            for _ in range(rng.randint(0, 4)):
                scores.append({"person_id": person["id"], "subject": rng.choice(SUBJECTS),
                               "points": None if rng.random() < 0.1 else rng.randint(0, 100)})
        scores += [dict(s) for s in rng.sample(scores, 25)]  # duplicate rows
        orders = [{"id": i, "person_id": rng.randint(1, 75),  # some people have none
                   "status": None if i % 17 == 0 else rng.choice(STATUSES),
                   "amount": decimal.Decimal(rng.randint(100, 99999)) / 100,
                   "at": EPOCH + dt.timedelta(minutes=rng.randint(-9000, 9000))}
                  for i in range(1, 651)]
        tags = [{"person_id": rng.randint(1, 60), "tag": rng.choice(TAGS)} for _ in range(180)]
        tags += [dict(t) for t in rng.sample(tags, 20)]
        events = [{"id": i % 700 + 1, "kind": rng.choice(KINDS),  # ids repeat: no key
                   "person_id": None if i % 9 == 0 else rng.randint(1, 60),
                   "at": EPOCH + dt.timedelta(seconds=rng.randint(-86400, 86400))}
                  for i in range(760)]
        notes = [{"id": i, "person_id": rng.randint(1, 60), "title": rng.choice(NAMES),
                  "body": rng.choice(TAGS)} for i in range(1, 21)]
        self.rows = {"people": people, "scores": scores, "orders": orders, "tags": tags,
                     "events": events, "notes": notes,
                     "api_list_people": [{k: v for k, v in p.items() if k != "balance"}
                                         for p in people],
                     "api_list_scores": [dict(s) for s in scores],
                     "api_list_tags": [{**t, "extra": {"n": i % 5, "tag": t["tag"]}}
                                       for i, t in enumerate(tags)],
                     "api_get_card": [{"person_id": p["id"], "body": card(p)} for p in people]}

    # -- the reference ----------------------------------------------------------------

    @staticmethod
    def ddl() -> list[str]:
        return [f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in cols)})"
                for name, cols in COLUMNS.items()]

    def records(self, name: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return [tuple(Jsonb(r[c]) if t == "jsonb" else r[c] for c, t in COLUMNS[name])
                    for r in self.rows[name]]

    # -- the resources ------------------------------------------------------------------

    def resources(self) -> list[Resource]:
        """The Python resources (the ``api_`` tables come from ``api.py``'s document)."""
        return [self._people(), self._scores(), self._orders(), self._tags(), self._events(),
                self._notes()]

    def _people(self) -> Resource:
        filters = ["age", "city", "name", "joined", "seen", "balance"]

        def select(b: Bindings) -> list[dict[str, Any]]:
            out = [r for r in self.rows["people"] if _meets(r, b, filters)]
            return out[:b.limit] if b.limit is not None else out

        return define_resource("people", columns=COLUMNS["people"], primary_key=["id"],
                               filters=filters, volatility="stable", ttl=60, select=select,
                               description="People, with what they are filtered by")

    def _scores(self) -> Resource:
        def select(b: Bindings) -> Iterator[dict[str, Any]]:
            person = b.one("person_id")
            for row in self.rows["scores"]:
                if row["person_id"] == person:
                    yield row

        return define_resource("scores", columns=COLUMNS["scores"], keys=["person_id"],
                               volatility="volatile", select=select,
                               description="A person's scores (duplicates are real rows)")

    def _orders(self) -> Resource:
        def select(b: Bindings) -> list[dict[str, Any]]:
            return self.rows["orders"]  # the filters are Postgres's to apply

        return define_resource("orders", columns=COLUMNS["orders"], primary_key=["id"],
                               filters=["person_id", "status", "amount", "at"],
                               volatility="immutable", select=select,
                               description="Orders; the tool ignores its filters")

    def _tags(self) -> Resource:
        async def select(b: Bindings) -> AsyncIterator[dict[str, Any]]:
            tag = b.one("tag")
            for row in self.rows["tags"]:
                if row["tag"] == tag:
                    yield row

        return define_resource("tags", columns=COLUMNS["tags"], keys=["tag"],
                               volatility="stable", select=select,
                               description="The people with a tag")

    def _events(self) -> Resource:
        async def select(b: Bindings) -> AsyncIterator[dict[str, Any]]:
            rows = self.rows["events"]
            limit = len(rows) if b.limit is None else b.limit
            for start in range(0, min(limit, len(rows)), PAGE):  # one "request" per page
                for row in rows[start:min(start + PAGE, limit)]:
                    yield row

        return define_resource("events", columns=COLUMNS["events"], volatility="immutable",
                               select=select, description="Events, read page by page")

    def _notes(self) -> Resource:
        def select(b: Bindings) -> list[dict[str, Any]]:
            with self.lock:
                return [dict(r) for r in self.rows["notes"]]

        def insert(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            with self.lock:
                store = self.rows["notes"]
                made = []
                for row in rows:
                    new = {**row, "id": max((r["id"] for r in store), default=0) + 1}
                    store.append(new)
                    made.append(dict(new))
                return made

        def update(changes: dict[str, Any], b: Bindings) -> None:
            with self.lock:
                for row in self.rows["notes"]:
                    if row["id"] == b.one("id"):
                        row.update(changes)

        def delete(b: Bindings) -> None:
            with self.lock:
                self.rows["notes"] = [r for r in self.rows["notes"] if r["id"] != b.one("id")]

        return define_resource("notes", columns=COLUMNS["notes"], primary_key=["id"],
                               volatility="volatile", select=select, insert=insert,
                               update=update, delete=delete,
                               description="Notes; the tool assigns ids")
