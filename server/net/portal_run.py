"""A portal run: Bind, [Describe], Execute and Sync that arrived together, in one pass.

A prepared read whose messages arrived together, outside a transaction block, is
answered as one: in the transport's callbacks when the session can answer it from its
calls' caches (``callbacks``), else by the connection's task (``in_task``). This
module holds what both ways share, and the task's way. The client cannot tell them
apart, nor from the messages read one by one, but by their time.

Rules:
- A run may be a fast read when its statement is known, its values counted, and it
  is described if the run asks for its description, outside a transaction block
  (``fast_args``).
- In the task, a compiled read is answered in one pass (``Session.fast_read``); any
  other run has its decoded messages answered one by one, as if read so, and its
  first error drops what is left of it, as recovery would.
- Its reply (``send_run``) is what Bind, [Describe], Execute and Sync read one by one
  would answer; portals end with it, as at Sync outside a block. What goes before
  the rows, the tag and ReadyForQuery go encoded, like a relayed row: messages the
  normal phase always allows, with no state to check.
- ``h`` is the connection (``ClientHandler``), which this module does not import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glove_scratchpad.catalog import StepResult
from glove_scratchpad.wire import Describe, Execute, Param, PortalRun

from ..engine.result import Result
from ..engine.session import ParsedStatement
from . import portals as p

__all__ = ["EXECUTE", "fast_args", "head", "in_task", "send_run"]

# A portal run's Describe and Execute, decoded (Bind comes as it was sent).
DESCRIBE_PORTAL, EXECUTE = Describe("P", ""), Execute("", 0)

FastArgs = tuple[ParsedStatement, list[Param], tuple[int, ...]]


def fast_args(h: Any, run: PortalRun) -> FastArgs | None:
    """A portal run's statement, parameters and formats, if it may be a fast read."""
    statement = p.fast_statement(h.statements, run) if h.tx_status() == "I" else None
    if statement is None or statement.stmt is None:
        return None
    return statement.stmt, p.params_of(statement, run.bind), tuple(run.bind.result_formats)


def head(h: Any, run: PortalRun) -> Callable[[bytes], bytes]:
    """What goes before a run's rows, if they are relayed as they come."""
    return lambda _: p.run_head(h.statements[run.bind.statement], run)


def send_run(h: Any, run: PortalRun, outcome: Result | StepResult | Exception) -> None:
    """A fast read's messages, buffered (a ``StepResult``: the sidecar's reply, relayed)."""
    h.portals.clear()  # outside a transaction block, as at Sync
    if not h.relayed:  # else it went before the rows
        h.out.append(p.run_head(h.statements[run.bind.statement], run))
    if isinstance(outcome, StepResult):
        h.send_rows(outcome.rows)
        h.out.append(p.tag_bytes(outcome.tag))
    elif isinstance(outcome, Exception):
        h.failed(EXECUTE, outcome)
    else:
        h.send_notices(outcome.notices)
        h.send_rows(outcome.data_rows)
        h.out.append(p.tag_bytes(outcome.command_tag))
    h.out.append(p.READY_BYTES[h.tx_status()])


async def in_task(h: Any, run: PortalRun, pending: p.Pending) -> bool:
    """A portal run answered by the task: a compiled read in one pass (True); any other
    as its decoded messages one by one (False)."""
    h.conn.take(run)
    try:
        args = fast_args(h, run)
        work = None if args is None else h.session.fast_read(*args)
    except Exception as exc:  # our bug: an error of the run's, and the connection goes on
        h.failed(EXECUTE, exc)
        await h.sync()
        return False
    if work is None:
        for msg in (run.bind, *((DESCRIBE_PORTAL,) if run.describe else ()), EXECUTE):
            try:
                await h.answer_extended(msg, pending)
            except Exception as exc:
                h.failed(msg, exc)  # what recovery would drop is this run's rest
                break
        await h.sync()
        return False
    h.relaying(head(h, run))
    try:
        outcome: Result | Exception = await h.cancellable(work)
    except Exception as exc:
        outcome = exc
    finally:
        h.rows_head = None
    send_run(h, run, outcome)
    await h.flush()
    return True
