"""What a statement that names no table is told: the tables its words find.

``relation "gh_stars" does not exist`` gets a HINT that names the search and
its best matches: ``SELECT * FROM scratchpad.search('gh stars')``; the best
matches: gh_activity_list_stargazers_for_repo, …. The search runs in the
sidecar (``catalog/_search.py``) and calls no tool.

Rules:
- ``SELECT * FROM scratchpad.resources WHERE name = 'gh_stars'`` that finds
  no row gets a NOTICE with the same HINT (``no_such_table``).
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
from .result import Notice
from .statement import Statement

__all__ = ["SUGGESTED", "hint_search", "no_such_table", "search_hint"]

SUGGESTED = 3  # the matches a hint names


async def hint_search(st: Statement, exc: errors.SqlError) -> None:
    """Name ``scratchpad.search`` and its best matches in the HINT of an undefined table."""
    name = exc.fields.get("table_name")
    if not isinstance(exc, errors.UndefinedTable) or not name:
        return
    hint = await search_hint(st, name)
    if hint is not None:
        exc.hint = hint


async def no_such_table(st: Statement, name: str) -> Notice:
    """The NOTICE of ``scratchpad.resources WHERE name = '…'`` that names no table."""
    return Notice(f'no table is named "{name}"', hint=await search_hint(st, name))


async def search_hint(st: Statement, name: str) -> str | None:
    """The search of a name's words and its best matches, as a HINT; None when the name
    has no word."""
    words = name_words(name)
    if not words:
        return None
    system = st.services.schemas.system
    try:
        out = await sidecar.pipeline(st, [Step(
            f"SELECT name FROM {quote_ident(system)}.search($1, {SUGGESTED})",
            [encode_param(words)], own=True)])
        found = [value.decode() for row in out.rows if (value := row.values[0]) is not None]
    except errors.SqlError:
        found = []
    return (f"SELECT * FROM {system}.search('{words}') finds tables by the words of a "
            "task" + (f"; the best matches: {', '.join(found)}." if found else "."))
