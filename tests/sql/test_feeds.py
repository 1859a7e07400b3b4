"""Keys fed by the data (``sql/feeds.py``), through the wire: a join gives a required key its
values, one call per distinct value, and the statement reads what those calls return."""

from __future__ import annotations

from .fix_answers import answer, refusal


async def test_a_join_feeds_a_required_key(server):
    assert await answer(server, "SELECT v.n, s.done FROM (VALUES (0), (0)) v(n) JOIN slow s "
                                "ON s.seconds = v.n") == [(0, True), (0, True)]


async def test_a_key_the_row_itself_would_feed_is_refused(server):
    error = await refusal(server, "SELECT * FROM slow s WHERE s.seconds = s.seconds + 0")
    assert error.sqlstate == "22023"
    assert 'needs a value for its required key "seconds"' in (error.message_primary or "")
