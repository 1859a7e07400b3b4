"""Which settings a client may change (``sql/setting_rules.py``), through the wire: a setting
the server fixes is refused under its old alias too, naming the setting; others are set."""

from __future__ import annotations

from .fix_answers import answer, refusal


async def test_an_old_alias_is_judged_as_the_setting_it_names(server):
    error = await refusal(server, "SET sort_mem = '1GB'")
    assert error.sqlstate == "42501"
    assert error.message_primary == 'permission denied to set parameter "work_mem"'
    assert "fixed by the server" in (error.message_hint or "")


async def test_a_harmless_setting_is_set(server):
    assert await answer(server, "SET application_name = 'mirror'") == [("SET",)]
