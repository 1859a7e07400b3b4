"""What a statement that names no table is told: the tables its words find.

``relation "gh_stars" does not exist`` gets a HINT that names the search and
its best matches: ``SELECT * FROM scratchpad.search('gh stars')``; the best
matches: gh_activity_list_stargazers_for_repo, …. The search runs in the
sidecar (``catalog/_search.py``) and calls no tool.

Rules:
- Only the gate's own "does not exist" is hinted (it names the relation in the
  error's ``table_name``); a hint it already gives (a system view named without
  its schema) is kept.
- The words are the name's, split as the index splits names: letters and digits
  only, so they are safe in the hint's SQL.
- A failed search leaves the error as it was: the hint is help, never a new error.
"""

from __future__ import annotations

from glove_scratchpad import errors
from glove_scratchpad.catalog import Step, encode_param, name_words
from glove_scratchpad.names import quote_ident

from . import sidecar
from .statement import Statement

__all__ = ["SUGGESTED", "hint_search"]

SUGGESTED = 3  # the matches a hint names


async def hint_search(st: Statement, exc: errors.SqlError) -> None:
    """Name ``scratchpad.search`` and its best matches in the HINT of an undefined table."""
    name = exc.fields.get("table_name")
    if not isinstance(exc, errors.UndefinedTable) or not name:
        return
    words = name_words(name)
    if not words:
        return
    system = st.services.schemas.system
    try:
        out = await sidecar.pipeline(st, [Step(
            f"SELECT name FROM {quote_ident(system)}.search($1, {SUGGESTED})",
            [encode_param(words)], own=True)])
    except errors.SqlError:
        return
    found = [value.decode() for row in out.rows if (value := row.values[0]) is not None]
    exc.hint = (f"SELECT * FROM {system}.search('{words}') finds tables by the words of a "
                "task" + (f"; the best matches: {', '.join(found)}." if found else "."))
