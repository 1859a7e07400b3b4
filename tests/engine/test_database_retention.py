"""``retention_days``: the audit's calls and the journal's final transactions older
than that are forgotten; recent ones, and a transaction still firing, stay. What is
left is read over the wire, as an administrator reads it."""

from __future__ import annotations

from glove_scratchpad.server.engine.guard import Limits

from .fix_reliability import Notes, serve

CALLS = "SELECT verb FROM scratchpad.calls WHERE resource = 'notes' ORDER BY at"
JOURNAL = "SELECT txid, status FROM scratchpad.journal ORDER BY txid, seq"


async def test_old_calls_and_final_transactions_are_forgotten(sidecar):
    notes = Notes()
    async with serve(sidecar, [notes.resource()], limits=Limits(retention_days=7)) as served:
        db = served.db
        ann, root = await served.connect(), await served.connect("root")
        for title in ("old", "in flight"):
            await ann.execute("INSERT INTO notes (title) VALUES (%s)", [title])
        _, in_flight = [t for t, _ in await (await root.execute(JOURNAL)).fetchall()]
        await db.audit.flush()
        private = db.schemas.private
        await db.catalog.pool.execute(
            f"""UPDATE "{private}".calls SET at = at - '10 days'::interval""")
        await db.catalog.pool.execute(
            f"""UPDATE "{private}".journal SET staged_at = staged_at - '10 days'::interval,
                fired_at = fired_at - '10 days'::interval""")
        # Left firing by a server that stopped mid-write: not final, so kept.
        await db.catalog.pool.execute(
            f"""UPDATE "{private}".journal SET status = 'firing' WHERE txid = $1""", in_flight)
        await ann.execute("INSERT INTO notes (title) VALUES ('new')")
        new = (await (await root.execute(JOURNAL)).fetchall())[-1][0]

        await db.prune(7)

        rows = await (await root.execute(JOURNAL)).fetchall()
        assert rows == [(in_flight, "firing"), (new, "fired")]
        assert await (await root.execute(CALLS)).fetchall() == [("insert",)]  # the new one
        assert [d for v, d in notes.writes()] == [["old"], ["in flight"], ["new"]]
