"""The server's sessions as Postgres' backends: ``pg_backend_pid()``,
``pg_cancel_backend(pid)``, and the rows of ``scratchpad.activity``.

Rules:
- A session's pid is the process id its BackendKeyData gave the client (what a
  CancelRequest names); a session of the Python API has none (0).
- ``pg_cancel_backend(pid)`` cancels the statement running in a session of this
  server process, as the wire's CancelRequest does: the caller's own sessions, or
  any for an administrator (another user's: 42501, as Postgres). A pid that no
  session here has gives false with a WARNING, as Postgres does.
- Each is a statement of its own (``allowlist.backend_call``). Its value reaches
  the client through the sidecar as a constant, so it comes in the format asked
  for, typed as Postgres types it (integer, boolean).
- A user reads their own sessions in ``scratchpad.activity``, an administrator
  everyone's; with ``--workers`` each worker's sessions are its own.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.catalog import SYSTEM_VIEWS, Step
from glove_scratchpad.wire import FieldDescription

from . import sidecar
from .cache import call_number
from .result import Notice, Result
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Backend", "activity_row", "answer", "described", "visible"]

_INT4, _BOOL = 23, 16


class Backend(Protocol):
    """A session as the activity view and pg_cancel_backend see it."""

    pid: int
    user: str

    def cancel_running(self) -> bool: ...

    def activity_row(self) -> dict[str, Any]: ...


def visible(sessions: Iterable[Backend], user: str, admin: bool) -> list[dict[str, Any]]:
    """``scratchpad.activity``'s rows: the sessions ``user`` may see, by pid."""
    return sorted((s.activity_row() for s in list(sessions) if admin or s.user == user),
                  key=lambda row: row["pid"])


def activity_row(pid: int, user: str, state: TxState, running: Statement | None, query: str,
                 query_start: float | None, backend_start: float) -> dict[str, Any]:
    """A session as a row of ``scratchpad.activity`` (``pg_stat_activity``'s)."""
    now = time.time()
    shown = ("active" if running is not None else
             "idle in transaction" if state is TxState.OPEN else
             "idle in transaction (aborted)" if state is TxState.FAILED else
             "idle")
    calls = [{"resource": r, "verb": v, "seconds": round(now - t, 3)}
             for r, v, t in (running.in_flight.values() if running else ())
             if r not in SYSTEM_VIEWS]  # the tools', not the views' own
    return {"pid": pid, "usename": user, "state": shown, "query": query or None,
            "query_start": _stamp(query_start), "backend_start": _stamp(backend_start),
            "calls": calls if running is not None else None}


def _stamp(seconds: float | None) -> Any:
    """A time as the view's timestamptz columns take it."""
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, dt.UTC)


def _column(call: Any, target: Any) -> str:
    return str(target.name or call.funcname[-1].sval)


def described(call: Any, target: Any, param_oids: tuple[int, ...]
              ) -> tuple[tuple[int, ...], tuple[FieldDescription, ...]]:
    """The parameter types and the one column of a backend call, calling nothing."""
    name = str(call.funcname[-1].sval)
    arg = call.args[0] if call.args else None
    given = param_oids or ((_INT4,) if arg is not None and _is_param(arg) else ())
    oid = _INT4 if name == "pg_backend_pid" else _BOOL
    return given, (FieldDescription(_column(call, target), type_oid=oid),)


def _is_param(arg: Any) -> bool:
    return isinstance(arg.arg if isinstance(arg, ast.TypeCast) else arg, ast.ParamRef)


def _pid_argument(call: Any, params: list[Any]) -> int | None:
    raw = call_number(call, params)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise errors.InvalidTextRepresentation(
            f'invalid input syntax for type integer: "{raw}"',
            hint="Pass the pid as a number, from scratchpad.activity.") from None


async def answer(st: Statement, call: Any, target: Any, params: list[Any],
                 sessions: Iterable[Backend]) -> Result:
    """Run ``SELECT pg_backend_pid()`` or ``SELECT pg_cancel_backend(pid)``."""
    name = str(call.funcname[-1].sval)
    column = _column(call, target).replace('"', '""')
    notices: list[Notice] = []
    if name == "pg_backend_pid":
        sql = f'SELECT {int(st.pid)}::integer AS "{column}"'
    else:
        pid = _pid_argument(call, params)
        done = None if pid is None else _cancel(st, pid, sessions, notices)
        value = "NULL" if done is None else ("true" if done else "false")
        sql = f'SELECT {value}::boolean AS "{column}"'
    out = await sidecar.pipeline(st, [Step(sql, (), st.formats)])
    result = sidecar.result_of(st, "SELECT 1", out)
    result.notices.extend(notices)
    return result


def _cancel(st: Statement, pid: int, sessions: Iterable[Backend], notices: list[Notice]
            ) -> bool:
    for session in list(sessions):
        if session.pid != pid or not pid:
            continue
        if session.user != st.user and not st.policy.admin:
            raise errors.InsufficientPrivilege(
                "permission denied to cancel query",
                detail="Only an administrator may cancel another user's statement.",
                hint="SELECT pid, usename, query FROM scratchpad.activity lists the "
                "sessions you may cancel: your own.")
        return session.cancel_running()
    notices.append(Notice(f"PID {pid} is not a session of this server", "WARNING", errors.WARNING,
                          hint="SELECT pid, state, query FROM scratchpad.activity lists "
                          "them."))
    return False
