"""Writes in WITH: each part in order, each reading what the writes before it returned.

Outside a transaction each write fires before the next part is planned; inside one
each is staged, and a part that reads what a staged INSERT returns is planned again
at COMMIT, from the rows the tool returned. In process and over the wire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from glove_scratchpad.resources import Bindings, Resource, define_resource

from ..scenarios.fix_ways import WAYS, Failed, Way, way_into


class Issue(BaseModel):
    id: int | None = None
    title: str


class Email(BaseModel):
    to_addr: str
    subject: str


class Label(BaseModel):
    issue_id: int
    label: str


@dataclass
class Tools:
    """An issue tracker that assigns ids, an outbox and a label store, recording calls."""

    issues: dict[int, str] = field(default_factory=lambda: {1: "old"})
    calls: list[tuple[str, Any]] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)

    def resources(self) -> list[Resource]:
        def issues(b: Bindings) -> list[Issue]:
            return [Issue(id=i, title=t) for i, t in self.issues.items()]

        def file_issues(rows: list[Issue]) -> list[Issue]:
            self.calls.append(("issues.insert", [r.title for r in rows]))
            made = []
            for row in rows:
                new = max(self.issues) + 1
                self.issues[new] = row.title
                made.append(Issue(id=new, title=row.title))
            return made

        def close_issue(b: Bindings) -> None:
            self.calls.append(("issues.delete", b.one("id")))
            self.issues.pop(b.one("id"))

        def send(rows: list[Email]) -> None:
            self.calls.append(("emails.insert", [r.subject for r in rows]))
            if self.refuse & {r.to_addr for r in rows}:
                raise RuntimeError("the outbox refused the address")

        def label(rows: list[Label]) -> list[Label]:
            self.calls.append(("labels.insert", [(r.issue_id, r.label) for r in rows]))
            return rows

        return [
            define_resource("issues", schema=Issue, primary_key=["id"], volatility="volatile",
                            select=issues, insert=file_issues, delete=close_issue, inline=True),
            define_resource("emails", schema=Email, volatility="volatile", insert=send,
                            inline=True),
            define_resource("labels", schema=Label, volatility="volatile", insert=label,
                            inline=True),
        ]


FILE_AND_MAIL = ("WITH new AS (INSERT INTO issues (title) VALUES ('broken') RETURNING id, "
                 "title) INSERT INTO emails (to_addr, subject) SELECT 'ann@example.org', "
                 "'issue ' || coalesce(id::text, '?') || ': ' || title FROM new")


@pytest.fixture(params=WAYS)
async def tools(request: Any, sidecar: Any) -> AsyncIterator[tuple[Tools, Way]]:
    t = Tools()
    async with way_into(request.param, sidecar, t.resources()) as way:
        yield t, way


async def test_outside_a_transaction_each_write_fires_before_the_next_reads_it(tools):
    t, way = tools
    out = await way.execute(FILE_AND_MAIL)
    assert out.tag == "INSERT 0 1"
    assert t.calls == [("issues.insert", ["broken"]), ("emails.insert", ["issue 2: broken"])]
    out = await way.execute("WITH gone AS (DELETE FROM issues WHERE id = 2 RETURNING id, title) "
                            "SELECT id, title FROM gone")
    assert (out.tag, out.rows) == ("SELECT 1", [(2, "broken")])
    assert t.calls[-1] == ("issues.delete", 2)


async def test_inside_a_transaction_a_part_is_planned_again_at_commit(tools):
    t, way = tools
    await way.execute("BEGIN")
    out = await way.execute(FILE_AND_MAIL + " RETURNING subject")
    assert out.rows == [("issue ?: broken",)]  # the id is the tool's to assign at COMMIT
    assert [m for _, m, _ in out.notices] == [
        "staged #1: issues.insert(1 row) will be called at COMMIT",
        "staged #2: insert of emails, planned at COMMIT from the rows #1 returns once fired "
        "(as staged now: emails.insert(1 row) will be called at COMMIT)"]
    out = await way.execute("SELECT id, status, depends_on FROM scratchpad.staged ORDER BY id")
    assert out.rows == [(1, "staged", None),
                        (2, "staged; planned again at COMMIT from the rows #1 return", [1])]
    out = await way.execute("COMMIT")
    assert t.calls == [("issues.insert", ["broken"]), ("emails.insert", ["issue 2: broken"])]
    out = await way.execute("SELECT seq, resource, status, arguments FROM scratchpad.journal "
                            "ORDER BY seq")
    assert out.rows == [
        (1, "issues", "fired", {"rows": [{"id": None, "title": "broken"}]}),
        (2, "emails", "fired", {"rows": [{"to_addr": "ann@example.org",
                                          "subject": "issue 2: broken"}]})]


async def test_rollback_sends_nothing_and_three_parts_fire_in_order(tools):
    t, way = tools
    chain = ("WITH new AS (INSERT INTO issues (title) VALUES ('a'), ('b') RETURNING id), "
             "tagged AS (INSERT INTO labels (issue_id, label) SELECT id, 'triage' FROM new "
             "RETURNING issue_id) INSERT INTO emails (to_addr, subject) SELECT 'x@y', "
             "'labelled ' || string_agg(issue_id::text, ',' ORDER BY issue_id) FROM tagged")
    await way.execute("BEGIN")
    await way.execute(chain)
    await way.execute("ROLLBACK")
    assert t.calls == []
    await way.execute("BEGIN")
    await way.execute(chain)
    await way.execute("COMMIT")
    assert t.calls == [("issues.insert", ["a", "b"]),
                       ("labels.insert", [(2, "triage"), (3, "triage")]),
                       ("emails.insert", ["labelled 2,3"])]


async def test_a_part_that_fails_names_the_writes_that_fired(tools):
    t, way = tools
    t.refuse.add("bad@example.org")
    with pytest.raises(Failed) as info:
        await way.execute(FILE_AND_MAIL.replace("ann@example.org", "bad@example.org"))
    assert "the outbox refused the address" in info.value.error[1]
    assert t.calls == [("issues.insert", ["broken"]), ("emails.insert", ["issue 2: broken"])]
    assert t.issues[2] == "broken"  # fired, and stays done


async def test_explain_shows_the_parts_calling_nothing(tools):
    t, way = tools
    out = await way.execute("EXPLAIN " + FILE_AND_MAIL)
    lines = [line for (line,) in out.rows]
    assert lines[:4] == [
        "Chain part 1: new AS (INSERT INTO issues)",
        "  Resource issues (volatile, write): keys: none; calls: 1",
        "Chain part 2: the statement (INSERT INTO emails), reading the RETURNING of new; in "
        "a transaction it is planned at COMMIT, once new has fired (the ids its tool assigns)",
        "  Resource emails (volatile, write): keys: none; calls: 1"]
    assert t.calls == []


async def test_a_part_that_reads_a_table_an_earlier_part_writes_is_refused(tools):
    t, way = tools
    with pytest.raises(Failed) as info:
        await way.execute("WITH gone AS (DELETE FROM issues WHERE id = 1 RETURNING id) "
                          "SELECT count(*) FROM issues")
    sqlstate, message, hint = info.value.error
    assert (sqlstate, message) == (
        "0A000", 'the statement reads "issues", which gone writes earlier in the same '
        "statement")
    assert hint and "SELECT … FROM gone" in hint
    assert t.calls == []
