"""SET, RESET and SHOW kept in the session, and what connection pools send
(``engine/settings.py``), through the wire: DISCARD ALL puts every setting back."""

from __future__ import annotations

from .fix_session import session


async def test_set_show_reset(server):
    async with session(server) as s:
        (before,) = await s.rows("SHOW application_name")
        await s.tag("SET application_name = 'mine'")
        assert await s.rows("SHOW application_name") == [("mine",)]
        assert await s.tag("RESET application_name") == "RESET"
        assert await s.rows("SHOW application_name") == [before]


async def test_discard_all_puts_the_settings_back(server):
    async with session(server) as s:
        (before,) = await s.rows("SHOW application_name")
        await s.tag("SET application_name = 'pooled'")
        assert await s.tag("DISCARD ALL") == "DISCARD ALL"
        assert await s.rows("SHOW application_name") == [before]
