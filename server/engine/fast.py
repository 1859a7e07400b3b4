"""The fast path of a repeated statement that reads kept calls only.

A SELECT whose every reference reads a kept call (``keep.py``), with arguments
its text fixes (constants: no ``$n``, no sub-query, no join feeding them), needs
nothing of the engine once it has run: its rewritten text reads the kept tables,
and its own parameters are all it sends. ``compile`` records such a statement
after a full run; when it comes again and is ``usable``, the session sends its
parameters with that text to a pooled sidecar connection, in one round trip
(``run.run_compiled``).

Rules:
- A compiled statement is kept per view and text, with the kept calls it reads
  and their tables. It takes the fast path only while each of those calls is
  still kept, fresh and in the same table; while no write of the session (fired,
  or staged in its transaction) touches their resources; with as many
  parameters as the text has; and in a transaction that has not failed.
  Otherwise the full path runs it, and compiles it again.
- What the full path does for such a statement, the fast path does too: the
  statement timeout, the row and size limits, an error aborting the
  transaction, the kept calls' hit counts. The rest (the gate's verdict, the
  plan, the sidecar's check, the rewrite, the calls' identities) depends on
  the text alone, and was done by the run that compiled it.
- A text that mentions ``set_config`` is never compiled: the full path runs
  it in a transaction it rolls back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from glove_scratchpad.catalog import Param

from .keep import Kept
from .transaction import TxState
from .view import keep

if TYPE_CHECKING:
    from ..sql.analysis import Plan, Reference
    from .keep import Key
    from .session import Session

__all__ = ["Compiled", "compile", "usable"]


@dataclass(frozen=True, slots=True)
class Compiled:
    """A statement that reads kept calls only: its sidecar text and what it reads."""

    sql: str  # rewritten: the kept tables in place of the references
    n_params: int
    reads: tuple[tuple[Key, str], ...]  # each kept call's key, and its table


def compile(session: Session, plan: Plan, rows: dict[int, list[dict] | Kept], sql: str
            ) -> None:
    """Keep a statement that just ran over kept calls alone (``sql``: its rewritten
    text), for its next runs."""
    reads = []
    for ref in plan.reads:
        kept = rows.get(ref.id)
        if not isinstance(kept, Kept) or not kept.lasting or not _fixed(ref):
            return
        reads.append((kept.key, kept.table))
    if reads and plan.target is None and "set_config" not in plan.sql.lower():
        keep(session.view.compiled, plan.sql, Compiled(sql, plan.max_param, tuple(reads)))


def usable(session: Session, compiled: Compiled, params: Sequence[Param]) -> bool:
    """Whether a compiled statement may take the fast path now; if so, its kept calls
    count the hit."""
    if len(params) != compiled.n_params or session.tx.state is TxState.FAILED:
        return False
    kept_calls = session.db.kept
    found = []
    for key, table in compiled.reads:
        kept = kept_calls.find(key)
        if kept is None or kept.table != table or session.overlay.touches(key[1]):
            return False
        found.append(kept)
    for kept in found:
        kept.hits += 1
    return True


def _fixed(ref: Reference) -> bool:
    """Whether a reference's call is fixed by the text: its values are constants."""
    values = [v for p in ref.predicates for v in p.values]
    values += [v for c in ref.conditions for v in c.values]
    values += [v for v in (ref.limit, ref.offset) if v is not None]
    return all(v.is_const for v in values)
