"""Where things are in a statement's text: relation names, WITH and RETURNING. No I/O.

The rewrite edits the client's text in place, so it needs the exact spans of
what it replaces; the scanner's tokens give them whatever the spelling.
"""

from __future__ import annotations

from typing import Any

from pglast import parser

__all__ = ["Spans"]


class Spans:
    """The token spans of one statement's text."""

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self._tokens = parser.scan(sql) if sql else []

    def _token_index(self, location: int) -> int:
        for i, tok in enumerate(self._tokens):
            if tok.start >= location:
                return i
        return len(self._tokens)

    def name_span(self, location: int) -> tuple[int, int]:
        """The span of a possibly qualified relation name starting at ``location``."""
        i = self._token_index(location)
        end = location
        while i < len(self._tokens):
            tok = self._tokens[i]
            end = tok.end + 1
            nxt = self._tokens[i + 1] if i + 1 < len(self._tokens) else None
            if nxt is not None and nxt.name == "ASCII_46":  # "."
                i += 2
                continue
            break
        return location, end

    def with_insert_point(self, with_clause: Any) -> int:
        i = self._token_index(with_clause.location)
        end = self._tokens[i].end + 1
        if i + 1 < len(self._tokens) and self._tokens[i + 1].name == "RECURSIVE":
            end = self._tokens[i + 1].end + 1
        return end

    def returning_span(self) -> tuple[int, int] | None:
        for tok in reversed(self._tokens):
            if tok.name == "RETURNING":
                return tok.start, len(self.sql.rstrip().rstrip(";").rstrip())
        return None
