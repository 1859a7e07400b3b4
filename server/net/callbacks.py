"""Portal runs answered in the transports' callbacks: no task, no await.

When a portal run (``portal_run``) is a compiled read whose calls the session holds in
its caches, and the sidecar has an idle connection, the session starts it from the
client socket's callback (``Session.answer_read``; ``engine/answering.py``), and the
sidecar socket's callback that completes its reply answers the client in one write.
Meanwhile the connection's task stays parked: the connection is ANSWERING (``phases``).

Rules:
- One run at a time. Bytes that arrive meanwhile wait; at its end the next run that
  waits is answered so too, else the task wakes for them.
- Not while the client's transport is full: the task's way waits for it to drain.
- A run the session declines, or whose start met our bug, is remembered
  (``declined``): the task takes it, and need not ask again.
- A cancel stops a run with 57014, answered as its outcome. The client gone stops it
  with no answer. Either way the connection is PARKED again.
- Our own bug while starting a run is logged and counted (``internal``), and the
  task answers the run its way; while answering one, its reply is lost: the
  connection ends with XX000.
- ``h`` is the connection (``ClientHandler``), which this module does not import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.catalog import StepResult
from glove_scratchpad.wire import PortalRun

from ..engine.result import Result
from . import portal_run
from . import portals as p
from .internal import internal_error
from .phases import Phase, check

__all__ = ["Answering"]

Stop = Callable[[errors.SqlError | None], None]  # what stops a run (None: the client gone)


class Answering:
    """A connection's portal runs answered in callbacks: the one running, if any, and
    the last one declined."""

    __slots__ = ("_h", "_head", "_stop", "declined", "run")

    def __init__(self, h: Any) -> None:
        self._h = h
        self._stop: Stop | None = None
        self.run: PortalRun | None = None  # the run answered now
        self.declined: PortalRun | None = None
        self._head = self._head_of_run  # bound once: asked of every run

    def start(self, run: PortalRun) -> bool:
        """Start ``run`` in callbacks, if the session can answer it so: whether it started."""
        h = self._h
        if not h.writable() or h.session is None:
            return False
        check(h.phase, Phase.ANSWERING)  # before anything starts: a bug is caught here
        h.relayed, h.rows_head = False, self._head
        try:
            args = portal_run.fast_args(h, run)
            stop = None if args is None else h.session.answer_read(*args, self._done)
        except Exception as exc:  # the task's way takes it, and answers its error
            internal_error(exc, "starting a portal run in callbacks")
            stop = None
        if stop is None:
            h.rows_head = None
            self.declined = run
            return False
        h.conn.take(run)
        h.move(Phase.ANSWERING)
        self._stop, self.run = stop, run
        return True

    def stop(self, err: errors.SqlError | None) -> None:
        """Stop the run: ``err`` is its answer (a cancel's); None: the client is gone."""
        stop = self._stop
        assert stop is not None, "a run is stopped while it is answered"
        if err is None:  # no answer comes: the run is over now
            self._over()
        stop(err)

    def _over(self) -> PortalRun | None:
        h, run = self._h, self.run
        self._stop = self.run = h.rows_head = None
        h.move(Phase.PARKED)
        return run

    def _done(self, outcome: Result | StepResult | errors.SqlError) -> None:
        """The run is over: its reply, in one write; then the next run that waits, or the
        task wakes."""
        h = self._h
        try:
            run = self._over()
            assert run is not None
            portal_run.send_run(h, run, outcome)
            if not h.closed:
                h.write(b"".join(h.out))
        except Exception as exc:  # the reply is lost, so is the client
            h.out.clear()
            h.out_size = 0
            h.evict(internal_error(exc, "answering a portal run"))
            return
        h.out.clear()
        h.out_size = 0
        if h.closed or h.conn.buffered:
            h.on_bytes()  # the next run that waits, answered so too; else wake

    def _head_of_run(self, _: bytes) -> bytes:
        run = self.run
        assert run is not None  # rows come after ``start`` set it
        return p.run_head(self._h.statements[run.bind.statement], run)
