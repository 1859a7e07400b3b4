"""The soak's CI smoke: ``soak`` for ~15 s with 8 clients (``make soak`` runs 64 for
10 minutes). No unexpected error, every journal row final, no idempotency key fired
twice, every key the tools fired journaled ``fired``, and no Postgres left behind."""

from __future__ import annotations

from soak import soak

CLIENTS, SECONDS = 8, 15.0


async def test_soak_smoke():
    report = await soak(CLIENTS, SECONDS)
    print(report.text())
    assert report.statements > 100
    assert not report.unexpected, report.text()
    assert report.errors["57014"] > 0 and report.disconnects > 0  # it did cancel and leave
    assert report.journal.get("fired", 0) > 0
    assert set(report.journal) <= {"fired", "failed", "not run", "in doubt"}, report.journal
    assert report.keys_twice == 0 and report.keys_missing == 0, report.text()
    assert report.backends["after SIGTERM"] == 0
