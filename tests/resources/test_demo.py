"""The bundled demo resources: offline, deterministic, with fresh state per set."""

import base64
import datetime as dt

import pytest
from pydantic import ValidationError

from glove_scratchpad.errors import MissingRequiredKey
from glove_scratchpad.resources import Bindings, Resource, call_resolver
from glove_scratchpad.resources.demo import Task, demo_resources, resources


def _by_name(rs=None):
    return {r.name: r for r in (rs if rs is not None else demo_resources())}


async def _select(resource: Resource, **bound):
    b = Bindings({k: v if isinstance(v, list) else [v] for k, v in bound.items()},
                 resource.name)
    stamp = {k: b.one(k) for k in resource.keys}
    return resource.validate_rows(await call_resolver(resource.select, b), stamp)


def test_the_module_serves_the_demo_set():
    assert [r.name for r in resources] == ["time", "tasks", "emails", "web", "images"]
    assert all(isinstance(r, Resource) for r in resources)


def test_each_call_builds_a_fresh_set():
    first, second = demo_resources(), demo_resources()
    assert all(a is not b for a, b in zip(first, second, strict=True))


async def test_state_is_not_shared_between_sets():
    one, two = _by_name(), _by_name()
    await call_resolver(one["tasks"].insert, [Task(title="Only in one")])
    titles_one = [t["title"] for t in await _select(one["tasks"])]
    titles_two = [t["title"] for t in await _select(two["tasks"])]
    assert "Only in one" in titles_one
    assert "Only in one" not in titles_two
    assert len(titles_two) == 3


async def test_time_is_one_row_with_today_and_tomorrow():
    (row,) = await _select(_by_name()["time"])
    assert row["now"].tzinfo is not None
    assert row["tomorrow"] - row["today"] == dt.timedelta(days=1)


def test_web_requires_query_and_images_require_prompt():
    rs = _by_name()
    assert rs["web"].keys == ("query",)
    assert rs["web"].column("query").nullable is False
    assert rs["images"].keys == ("prompt",)
    assert rs["images"].column("prompt").nullable is False


@pytest.mark.parametrize(("name", "key"), [("web", "query"), ("images", "prompt")])
async def test_a_read_without_the_key_is_missing_required_key(name, key):
    resource = _by_name()[name]
    with pytest.raises(MissingRequiredKey, match=f'"{key}"'):
        await call_resolver(resource.select, Bindings({}, name))


async def test_web_search_ranks_offline_corpus_hits():
    rows = await _select(_by_name()["web"], query="postgresql protocol")
    assert rows
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["query"] == "postgresql protocol" for r in rows)
    assert rows[0]["url"] == "https://www.postgresql.org/docs/current/protocol.html"


async def test_web_search_with_no_match_is_empty():
    assert await _select(_by_name()["web"], query="zzzqqq") == []


async def test_images_are_a_deterministic_data_url_per_prompt():
    images = _by_name()["images"]
    (a,) = await _select(images, prompt="a red fox")
    (b,) = await _select(_by_name()["images"], prompt="a red fox")
    (c,) = await _select(images, prompt="a blue whale")
    assert a["url"] == b["url"]
    assert a["url"] != c["url"]
    assert a["url"].startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(a["url"].split(",", 1)[1]).decode()
    assert svg.startswith("<svg")
    assert (a["prompt"], a["width"], a["height"]) == ("a red fox", 256, 256)


def test_tasks_have_every_verb_and_an_enum_status():
    tasks = _by_name()["tasks"]
    assert tasks.verbs == ("select", "insert", "update", "delete")
    assert tasks.primary_key == ("id",)
    assert "one of: todo, done" in tasks.column("status").description


async def test_tasks_crud():
    tasks = _by_name()["tasks"]
    assert len(await _select(tasks)) == 3

    created = tasks.validate_rows(await call_resolver(
        tasks.insert, tasks.validate_insert_rows([{"title": "Water the plants"}])))
    assert created[0]["id"] == 4
    assert created[0]["status"] == "todo"

    assert await call_resolver(tasks.update, {"status": "done"}, Bindings({"id": [4]})) == 1
    (row,) = await _select(tasks, id=4)
    assert (row["title"], row["status"]) == ("Water the plants", "done")
    assert [r["id"] for r in await _select(tasks, status="done")] == [3, 4]

    assert await call_resolver(tasks.delete, Bindings({"id": [4]})) == 1
    assert await _select(tasks, id=4) == []
    assert await call_resolver(tasks.delete, Bindings({"id": [4]})) == 0
    assert await call_resolver(tasks.update, {"status": "done"}, Bindings({"id": [4]})) == 0


async def test_a_task_update_is_validated_before_it_is_kept():
    tasks = _by_name()["tasks"]
    with pytest.raises(ValidationError):
        await call_resolver(tasks.update, {"status": "bogus"}, Bindings({"id": [1]}))
    await call_resolver(tasks.update, {"due": "2030-01-02"}, Bindings({"id": [1]}))
    (row,) = await _select(tasks, id=1)  # the list is still readable
    assert (row["status"], row["due"]) == ("todo", dt.date(2030, 1, 2))


async def test_emails_are_queued_never_sent():
    emails = _by_name()["emails"]
    assert emails.verbs == ("insert",)
    rows = emails.validate_insert_rows([{"to_addr": "a@example.org", "subject": "Hi"},
                                        {"to_addr": "b@example.org", "subject": "Yo"}])
    created = emails.validate_rows(await call_resolver(emails.insert, rows))
    assert [e["id"] for e in created] == [1, 2]
    assert all(e["queued_at"] is not None for e in created)
