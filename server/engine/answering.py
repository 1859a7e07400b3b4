"""A compiled read answered from the transports' callbacks: no task, no await.

When a client's portal run is a compiled read whose calls are all cached
(``fast.py``) and the pool has an idle connection, the session starts it on the
sidecar from the client socket's callback (``Runner.answer_read``), and the
sidecar socket's callback that completes its reply answers the client. Nothing
waits in between: the connection's task stays parked.

Rules:
- It ends once: with its result or error (``replied``), or stopped (``stop``) by
  a cancel, by its statement timeout, or by its client gone. A stopped run's
  sidecar connection is closed after a cancel, and its reply never reaches the client.
- What the runner does for a statement, this does through the runner's own hands
  (``runner.py``): the result cut at the row limit and its notices shown (``shape``),
  and the end counted, logged and cleared from ``scratchpad.activity`` (``end``, given
  the error it ended with: a stopped run's is a cancel's).
- A reply with nothing to cut and nothing to notice comes as the sidecar sent it (a
  ``StepResult``, rows and tag), and goes to the client so: no ``Result`` is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from glove_scratchpad import errors
from glove_scratchpad.catalog import StepResult

from .result import Result
from .timeouts import timed_out

__all__ = ["Answer", "Done"]

# A result to send: the sidecar's reply as it came, a Result, or the error.
Done = Callable[[Result | StepResult | errors.SqlError], None]


class Answer:
    """One read's run in callbacks, from its start on the sidecar to its client's reply."""

    __slots__ = ("_done", "_end", "_shape", "_timer", "abandon", "finished")

    def __init__(self, timeout: float, done: Done, shape: Callable[[Result], Result],
                 end: Callable[[BaseException | None], None]) -> None:
        self._done, self._shape, self._end = done, shape, end
        self.finished = False
        self.abandon: Callable[[], None] | None = None  # set once it is sent
        self._timer = asyncio.get_running_loop().call_later(timeout, self._timed_out)

    def replied(self, outcome: Result | StepResult | errors.SqlError) -> None:
        """The sidecar's reply is whole: its result (a ``StepResult`` needs no shaping:
        ``sidecar.start``), or its first error."""
        if self.finished:
            return
        self.finished = True
        self._timer.cancel()
        if isinstance(outcome, Result):
            try:
                outcome = self._shape(outcome)
            except errors.SqlError as exc:
                outcome = exc
        self._end(outcome if isinstance(outcome, errors.SqlError) else None)
        self._done(outcome)

    def stop(self, error: errors.SqlError | None) -> None:
        """Stop it where it is: ``error`` is the client's answer (None: the client is gone)."""
        if self.finished:
            return
        self.finished = True
        self._timer.cancel()
        if self.abandon is not None:
            self.abandon()
        self._end(asyncio.CancelledError())
        if error is not None:
            self._done(error)

    def _timed_out(self) -> None:
        self.stop(timed_out())
