"""What a fired write tells its client: the rows its tool gave back, the NOTICE that
names its journal row, and what to do about one whose outcome is unknown.

Rules:
- Once a tool has acted, nothing turns its write into a failure: an answer that does
  not fit the table is a WARNING (its values redacted, as a read's error is), and
  RETURNING shows the row as written.
- The NOTICE of a fired write names its journal row(s) and shows what the tool
  returned, cut at ``SHOWN`` characters.
- A write in doubt is never sent again without being told: the HINT says how to
  check, and how to restage it by force only if it did not take effect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glove_scratchpad import errors
from glove_scratchpad.catalog import as_json
from glove_scratchpad.redaction import redact_error
from glove_scratchpad.resources import Resource

from .result import Call, Notice, StagedWrite

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["SHOWN", "fired_notice", "in_doubt_hint", "returned_rows", "unread"]

SHOWN = 500  # characters of a tool's answer a NOTICE shows


def returned_rows(resource: Resource, call: Call, out: Any, ctx: Statement
                   ) -> list[dict]:
    """The rows a fired write's tool gave back, checked; none (the rows as written
    stand) when they do not fit the table: the write happened, so that is a WARNING,
    never its failure."""
    if isinstance(out, list | tuple) and out and call.verb != "delete":
        try:
            return resource.validate_rows(list(out))
        except errors.SqlError as exc:
            ctx.notice(unread(resource, call, exc))
    return []


def unread(resource: Resource, call: Call, exc: errors.SqlError) -> Notice:
    # It quotes the tool's values: redacted, as a read's error is.
    return Notice(f"{resource.name} {call.verb} fired, and what it returned does not fit "
                  f"the table: {redact_error(exc).message}", "WARNING", errors.WARNING,
                  hint="The write happened; RETURNING shows the row as written.")


def fired_notice(write: StagedWrite, rows: list[dict], system: str) -> Notice:
    """``fired #n: …``; its DETAIL names the write's journal row(s) and shows what the
    tool returned."""
    parts = []
    if write.journal:
        seqs = [s for _, s in write.journal]
        place = f"seq {seqs[0]}" if len(seqs) == 1 else f"seqs {seqs[0]}-{seqs[-1]}"
        parts.append(f"{system}.journal txid {write.journal[0][0]}, {place}")
    if rows:
        shown = as_json(rows)
        parts.append("the tool returned: " + (shown if len(shown) <= SHOWN
                                              else shown[:SHOWN] + "…"))
    return Notice(f"fired #{write.id}: {write.summary}", detail="; ".join(parts) or None)


def in_doubt_hint(st: Statement, txid: int | None) -> str:
    """What to do about a write whose outcome is unknown: check, then restage by force."""
    system = st.services.schemas.system
    if txid is None:
        return ("It may have fired: read the table to see whether it took effect before "
                "sending it again.")
    return (f"It may have fired: read the table to see whether it took effect. It is in "
            f"doubt in {system}.journal (txid {txid}), and {system}.restage({txid}) refuses "
            f"it; only if it did not take effect, SELECT {system}.restage({txid}, force => "
            "true) stages it again, with the same idempotency key.")
