"""What a session may do: its role's policy.

Rules:
- A policy says what a role may do: write or not, which resources it sees
  (allow and deny glob patterns), a row limit and a statement timeout.
- A resource a role may not see does not exist for it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    """What a session may do."""

    writes: bool = False
    allow: tuple[str, ...] = ("*",)
    deny: tuple[str, ...] = ()
    row_limit: int | None = None
    statement_timeout: float | None = None
    admin: bool = False

    def sees(self, resource: str) -> bool:
        return any(fnmatch.fnmatchcase(resource, p) for p in self.allow) and not any(
            fnmatch.fnmatchcase(resource, p) for p in self.deny)

    def visible(self, names: Iterable[str]) -> frozenset[str]:
        return frozenset(n for n in names if self.sees(n))

    @classmethod
    def of(cls, user: Any) -> Policy:
        """The policy of a configured user (``[users.NAME]``)."""
        return cls(user.writes, tuple(user.allow), tuple(user.deny), user.row_limit,
                   user.statement_timeout, user.admin)
