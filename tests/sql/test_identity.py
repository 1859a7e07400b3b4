"""Who a statement asks it runs as (``sql/identity.py``), through the wire: the identity
functions answer the connecting role wherever they stand, never the sidecar's agent role."""

from __future__ import annotations

from .fix_answers import answer


async def test_the_identity_functions_answer_the_connecting_role(server):
    assert await answer(server, "SELECT current_user, session_user, current_role, user",
                        user="someone") == [("someone",) * 4]


async def test_in_a_cte_and_beside_a_resource_too(server):
    assert await answer(server, "WITH me AS (SELECT current_user AS u) "
                                "SELECT me.u, i.name FROM me, items i WHERE i.id = 1",
                        user="someone") == [("someone", "item 1")]
