"""A session's settings, under Postgres's transaction rules for them.

Rules (Postgres's, for SET and ``set_config``):
- ``SET`` (``set_config(…, false)``) lasts for the session, unless the transaction
  it ran in rolls back: ROLLBACK, or ROLLBACK TO a savepoint made before it,
  restores what was in effect there.
- ``SET LOCAL`` (``set_config(…, true)``) lasts until the transaction ends, however
  it ends. A later ``SET`` of the same name replaces it, for the session.
- RELEASE keeps what was set since the savepoint; COMMIT keeps the session's values
  and drops the local ones.
- ``now`` is what is in effect (the session's values, then the local ones): what
  every statement is sent with. Each change returns the names whose value in effect
  it changed, for ParameterStatus.
- ``set_config(name, value, is_local)`` is SET, or SET LOCAL, of what Postgres
  set (``configured`` finds the calls, ``sidecar.run`` reads the values back). Its
  ``is_local`` must be written out (a literal, or a parameter); its name the gate
  already requires so. Outside a transaction block, SET LOCAL changes nothing
  (with a WARNING for SET LOCAL, silently for ``set_config``, as in Postgres).
- Nothing here touches the sidecar: values arrive checked and spelled by Postgres.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.wire import Param

from ..sql.nodes import const_value, set_config_calls
from ..sql.setting_rules import FALSE_WORDS, TRUE_WORDS, canonical_setting

__all__ = ["REPORTED", "SHOWN_ONLY", "SessionSettings", "changes", "configured",
           "reported_values"]

Values = dict[str, str]
# Settings a client sees in ParameterStatus, by lower-case name, spelled as Postgres does.
REPORTED = {n.lower(): n for n in (
    "application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
    "in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser", "search_path",
    "server_encoding", "server_version", "session_authorization",
    "standard_conforming_strings", "TimeZone")}
# Kept by the session for SHOW, never sent to the sidecar: its own transactions stay
# what they are (an implicit read-only one, or one rolled back).
SHOWN_ONLY = frozenset({"default_transaction_isolation"})


class SessionSettings:
    """The values a session's SETs left, and the marks that undo them."""

    def __init__(self) -> None:
        self.kept: Values = {}  # SET: for the session
        self.local: Values = {}  # SET LOCAL: until the transaction ends
        self.now: Values = {}  # in effect
        self._marks: list[tuple[Values, Values]] = []  # at BEGIN, then at each SAVEPOINT

    def set(self, name: str, value: str, *, local: bool = False) -> list[str]:
        if local:
            self.local[name] = value
        else:
            self.kept[name] = value
            self.local.pop(name, None)
        return self._changed()

    def reset(self, name: str) -> list[str]:
        self.kept.pop(name, None)
        self.local.pop(name, None)
        return self._changed()

    def reset_all(self) -> list[str]:
        self.kept.clear()
        self.local.clear()
        return self._changed()

    # -- the transaction's marks (called by ``Transaction``) --------------------------

    def begin(self) -> None:
        self._marks = [(dict(self.kept), {})]

    def savepoint(self) -> None:
        self._marks.append((dict(self.kept), dict(self.local)))

    def rollback_to(self, savepoint: int) -> list[str]:
        """Back to savepoint number ``savepoint`` (0: the first), which stays."""
        kept, local = self._marks[savepoint + 1]
        del self._marks[savepoint + 2:]
        self.kept, self.local = dict(kept), dict(local)
        return self._changed()

    def release(self, savepoint: int) -> None:
        del self._marks[savepoint + 1:]

    def end(self, *, committed: bool) -> list[str]:
        if self._marks and not committed:
            self.kept = self._marks[0][0]
        self.local = {}
        self._marks = []
        return self._changed()

    def _changed(self) -> list[str]:
        before, self.now = self.now, {**self.kept, **self.local}
        return changes(before, self.now)


def reported_values(names: Iterable[str], now: Values) -> tuple[dict[str, str], list[str]]:
    """Of those ``names`` a client sees in ParameterStatus: the values in effect here,
    by the names Postgres reports them under; and the names that are not set here (back
    to the sidecar's default), whose values only the sidecar knows."""
    known: dict[str, str] = {}
    rest: list[str] = []
    for name in names:
        if name.lower() in REPORTED:
            if name in now:
                known[REPORTED[name.lower()]] = now[name]
            else:
                rest.append(name)
    return known, rest


def changes(before: Values, now: Values) -> list[str]:
    """The names whose value differs between two sets of settings."""
    return [n for n in before.keys() | now.keys() if before.get(n) != now.get(n)]


def configured(node: Any, params: Sequence[Param]) -> list[tuple[str, bool]]:
    """(name, is_local) of each ``set_config`` call in a statement's tree."""
    found = []
    for args in set_config_calls(node):
        name, local = _text(args.get("setting_name"), params), args.get("is_local")
        is_local = _boolean(local, params)
        if name is None:
            continue  # NULL: set_config refuses it
        if is_local is None:
            raise errors.FeatureNotSupported(
                "set_config()'s is_local must be written out here: true or false",
                hint=f"Write set_config('{name}', …, false) to keep the value for the "
                "session, or true for the transaction.")
        found.append((canonical_setting(name), is_local))
    return found


def _text(node: Any, params: Sequence[Param]) -> str | None:
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.ParamRef):
        number = int(node.number or 0)
        value = params[number - 1].value if 0 < number <= len(params) else None
        return None if value is None else value.decode()
    value = const_value(node)
    return value if isinstance(value, str) else None


def _boolean(node: Any, params: Sequence[Param]) -> bool | None:
    """A boolean written out (a literal, or a parameter); None for anything else."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    number = int(node.number or 0) if isinstance(node, ast.ParamRef) else 0
    if 0 < number <= len(params):
        param = params[number - 1]
        if param.format == 1 and param.value is not None and len(param.value) == 1:
            return param.value != b"\0"
    value = const_value(node)
    if isinstance(value, bool):
        return value
    text = _text(node, params)
    if text is not None:
        word = text.strip().lower()
        return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
    return None
