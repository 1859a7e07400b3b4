"""The demo resources: what ``make run`` serves, with no API key and no network.

- ``time`` (stable): now, today, tomorrow.
- ``tasks``: an in-memory task list with due dates (select, insert, update, delete).
- ``emails``: an outbox; INSERT records a message, nothing is ever sent.
- ``web`` (volatile): search over a small bundled offline corpus; ``query`` is required.
- ``images`` (volatile): ``prompt`` is required; returns a deterministic SVG data: URL.

``demo_resources()`` builds a fresh set with its own state; ``resources`` is the
set this module serves.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import itertools
import json
from importlib import resources as files
from typing import Literal

from pydantic import BaseModel, Field

from ._resource import Bindings, Resource, define_resource

__all__ = ["Email", "Image", "Now", "SearchHit", "Task", "demo_resources", "resources"]


class Now(BaseModel):
    now: dt.datetime = Field(description="The current time, with time zone")
    today: dt.date = Field(description="Today's date (UTC)")
    tomorrow: dt.date = Field(description="Tomorrow's date (UTC)")


class Task(BaseModel):
    id: int | None = Field(default=None, description="Task id, assigned on INSERT")
    title: str = Field(description="What to do")
    due: dt.date | None = Field(default=None, description="Due date")
    status: Literal["todo", "done"] = Field(default="todo", description="Progress")


class Email(BaseModel):
    id: int | None = Field(default=None, description="Outbox id, assigned on INSERT")
    to_addr: str = Field(description="Recipient address")
    subject: str = Field(description="Subject line")
    body: str = Field(default="", description="Plain-text body")
    queued_at: dt.datetime | None = Field(default=None, description="When it was queued")


class SearchHit(BaseModel):
    query: str = Field(description="Search terms (required): words to look for")
    title: str = Field(description="Page title")
    url: str = Field(description="Page address")
    snippet: str = Field(description="A short extract")
    rank: int = Field(description="1 for the best match")


class Image(BaseModel):
    prompt: str = Field(description="What to draw (required)")
    url: str = Field(description="A data: URL of the generated SVG")
    width: int = Field(default=256, description="Width in pixels")
    height: int = Field(default=256, description="Height in pixels")


def _now() -> Now:
    now = dt.datetime.now(dt.UTC)
    return Now(now=now, today=now.date(), tomorrow=now.date() + dt.timedelta(days=1))


def _corpus() -> list[dict[str, str]]:
    return json.loads(files.files(__package__).joinpath("demo_corpus.json").read_text())


def _search(b: Bindings) -> list[SearchHit]:
    query = b.one("query")
    words = [w for w in query.lower().split() if w]
    scored = []
    for page in _corpus():
        text = f"{page['title']} {page['snippet']}".lower()
        score = sum(text.count(w) for w in words)
        if score:
            scored.append((score, page))
    scored.sort(key=lambda sp: (-sp[0], sp[1]["url"]))
    # A pushed LIMIT is honoured as a search API would: only the first results come back.
    return [SearchHit(query=query, rank=i + 1, **page)
            for i, (_, page) in enumerate(scored[:b.limit])]


def _image(b: Bindings) -> Image:
    prompt = b.one("prompt")
    digest = hashlib.sha256(prompt.encode()).hexdigest()
    hue, hue2 = int(digest[:2], 16) * 360 // 256, int(digest[2:4], 16) * 360 // 256
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256">'
        f'<rect width="256" height="256" fill="hsl({hue},70%,60%)"/>'
        f'<circle cx="128" cy="128" r="{64 + int(digest[4:6], 16) % 48}" '
        f'fill="hsl({hue2},70%,40%)"/></svg>'
    )
    url = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    return Image(prompt=prompt, url=url)


def demo_resources() -> list[Resource]:
    """A fresh demo set, with its own task list and outbox."""
    tasks: dict[int, Task] = {}
    outbox: list[Email] = []
    ids = itertools.count(1)
    today = dt.datetime.now(dt.UTC).date()
    status: Literal["todo", "done"]
    for title, days, status in (("Write the quarterly report", 1, "todo"),
                                ("Book the team offsite", 3, "todo"),
                                ("Renew the TLS certificate", 0, "done")):
        i = next(ids)
        tasks[i] = Task(id=i, title=title, due=today + dt.timedelta(days=days), status=status)

    def select_tasks(b: Bindings) -> list[Task]:
        rows = list(tasks.values())
        if b.has("id"):
            rows = [t for t in rows if t.id in b.all("id")]
        if b.has("due"):
            rows = [t for t in rows if t.due in b.all("due")]
        if b.has("status"):
            rows = [t for t in rows if t.status in b.all("status")]
        return rows

    def insert_tasks(rows: list[Task]) -> list[Task]:
        created = []
        for row in rows:
            task = row.model_copy(update={"id": row.id or next(ids)})
            tasks[task.id] = task  # type: ignore[index]
            created.append(task)
        return created

    def update_tasks(changes: dict, b: Bindings) -> int:
        task = tasks.get(b.one("id"))
        if task is None:
            return 0
        # model_copy(update=...) would skip validation and keep a bad value for later reads.
        tasks[task.id] = Task.model_validate({**task.model_dump(), **changes})  # type: ignore[index]
        return 1

    def delete_tasks(b: Bindings) -> int:
        return 1 if tasks.pop(b.one("id"), None) is not None else 0

    def send_emails(rows: list[Email]) -> list[Email]:
        created = []
        for row in rows:
            email = row.model_copy(update={"id": len(outbox) + 1,
                                           "queued_at": dt.datetime.now(dt.UTC)})
            outbox.append(email)
            created.append(email)
        return created

    return [
        define_resource(
            "time", schema=Now, volatility="stable",
            description="The current time; one row.", select=lambda b: [_now()], inline=True,
        ),
        define_resource(
            "tasks", schema=Task, primary_key=["id"], filters=["id", "due", "status"],
            volatility="volatile", description="The user's task list.", select=select_tasks,
            insert=insert_tasks, update=update_tasks, delete=delete_tasks, inline=True,
            stateful=True,
        ),
        define_resource(
            "emails", schema=Email, volatility="volatile",
            description="An outbox: INSERT queues a message (recorded, never sent).",
            insert=send_emails, inline=True, stateful=True,
        ),
        define_resource(
            "web", schema=SearchHit, keys=["query"], volatility="volatile",
            description="Web search over a small offline corpus.", select=_search, inline=True,
        ),
        define_resource(
            "images", schema=Image, keys=["prompt"], volatility="volatile",
            description="Image generation: one generated picture per prompt.", select=_image,
            inline=True,
        ),
    ]


resources = demo_resources()
