"""SET, RESET and SHOW, kept in the session; and what connection pools send.

Rules:
- A setting is checked and spelled canonically by Postgres (``set_config``),
  then kept by the session and sent with each of its statements.
- ``statement_timeout`` only lowers the server's cap (``timeouts.timeout``).
- Transaction isolation levels (BEGIN, SET TRANSACTION, SET SESSION
  CHARACTERISTICS, ``default_transaction_isolation``) are kept for SHOW alone: a
  transaction here is virtual, and the sidecar's own never takes them.
- Settings a client sees in ParameterStatus are reported when they change.
- SET LOCAL lasts until the transaction ends, SET until a ROLLBACK undoes it
  (``SessionSettings``); SET LOCAL outside a transaction block warns and
  changes nothing, as in Postgres.
- ``default_transaction_read_only`` and ``transaction_read_only`` are the
  session's (what it started with, SET, BEGIN READ ONLY): the sidecar runs
  every read read-only, whatever the session may do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pglast import ast, enums

from glove_scratchpad import errors
from glove_scratchpad.catalog import Step, encode_param, quote_ident

from ..sql.analysis import deparse
from ..sql.setting_rules import canonical_setting
from . import sidecar
from .result import Notice, Released, Result
from .session_settings import REPORTED, reported_values
from .timeouts import duration
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["isolation_option", "pool_reset", "read_only_option", "reported",
           "setting", "shown_duration"]

_SHOW_ALIASES = {"transaction isolation level": "transaction_isolation",
                 "session authorization": "session_authorization"}
# Accepted, and sent with each statement, but with no effect here: a statement runs on
# a pooled sidecar connection and a transaction is virtual, so nothing sits idle there.
_NOT_ENFORCED = {
    "idle_in_transaction_session_timeout": "a transaction here holds no sidecar connection "
    "between statements, and the server ends no idle transaction",
    "idle_session_timeout": "the server ends no idle session",
    "transaction_timeout": "a transaction here is virtual: only each statement is timed "
    "(statement_timeout)",
}
_MS_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000))


def shown_duration(seconds: float) -> str:
    """A duration setting as Postgres shows one in milliseconds: the largest unit that
    holds it whole (300 s is "5min", 1.5 s is "1500ms")."""
    ms = max(0, round(seconds * 1000))
    for unit, size in _MS_UNITS:
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"
# Accepted and kept by nothing but SHOW: a transaction here is virtual.
_IGNORED_SETTINGS = {"transaction_isolation", "transaction_read_only",
                     "transaction_deferrable"}


def isolation_option(options: Any) -> str | None:
    """The ISOLATION LEVEL among a BEGIN's or SET TRANSACTION's options, if any."""
    for opt in options or ():
        if isinstance(opt, ast.DefElem) and opt.defname == "transaction_isolation":
            assert isinstance(opt.arg, ast.A_Const)  # the level, as a string
            return str(getattr(opt.arg.val, "sval", ""))
    return None


def read_only_option(options: Any, default: bool) -> bool:
    """The READ ONLY / READ WRITE among a BEGIN's or SET TRANSACTION's options."""
    for opt in options or ():
        if isinstance(opt, ast.DefElem) and opt.defname == "transaction_read_only":
            assert isinstance(opt.arg, ast.A_Const)  # READ ONLY: 1, READ WRITE: 0
            return bool(getattr(opt.arg.val, "ival", 0))
    return default


def _setting_text(node: Any) -> str:
    if isinstance(node, ast.A_Const):
        val = node.val
        for attr in ("sval", "ival", "fval", "boolval"):
            if hasattr(val, attr):
                return str(getattr(val, attr))
    return deparse(node)


async def setting(st: Statement, node: Any, sql: str) -> Result:
    """SET, RESET and SHOW: kept in the session, checked and applied by Postgres."""
    settings = st.session_settings
    if isinstance(node, ast.VariableShowStmt):
        name = node.name or ""  # SHOW ALL is refused by the gate
        own = _read_only(st, name) or _isolation(st, name) or _enforced(st,
                                                                                   name)
        if own is not None:
            return Result.text("SHOW", [_SHOW_ALIASES.get(name, name)], [(own,)])
        # Postgres's own SHOW: its column is named as Postgres names the setting (DateStyle).
        step = Step("SHOW " + quote_ident(_SHOW_ALIASES.get(name, name)), own=True)
        return sidecar.result_of(st, "SHOW", await sidecar.pipeline(st, [step]))
    kind, name = node.kind, canonical_setting(node.name or "")
    k = enums.VariableSetKind
    result = Result("RESET" if sql.lstrip()[:5].upper() == "RESET" else "SET")
    tx = st.tx
    if kind == k.VAR_SET_MULTI and name == "transaction" and tx.state is TxState.OPEN:
        tx.read_only = read_only_option(node.args, tx.read_only)
        tx.isolation = isolation_option(node.args) or tx.isolation
    elif kind == k.VAR_SET_MULTI and name == "session characteristics":
        level = isolation_option(node.args)
        if level is not None:
            settings.set("default_transaction_isolation", level)
    elif name == "transaction_isolation" and kind == k.VAR_SET_VALUE and tx.state is TxState.OPEN:
        tx.isolation = ", ".join(_setting_text(a) for a in node.args or ()).lower()
    if kind == k.VAR_SET_MULTI or name in _IGNORED_SETTINGS:
        return result  # the transaction's own, or kept for SHOW only
    local = bool(node.is_local) and kind != k.VAR_RESET_ALL
    if name in _NOT_ENFORCED and kind != k.VAR_RESET_ALL:
        result.notices.append(Notice(
            f'{name} is accepted but not enforced here: {_NOT_ENFORCED[name]}', "WARNING",
            errors.WARNING, hint="statement_timeout bounds each statement; SHOW statement_timeout "
            "says what it is."))
    if local and st.tx.state is TxState.IDLE:
        result.notices.append(Notice("SET LOCAL can only be used in transaction blocks",
                                     "WARNING", errors.NoActiveSqlTransaction.sqlstate))
        return result
    if kind == k.VAR_RESET_ALL:
        changed = settings.reset_all()
    elif kind in (k.VAR_SET_VALUE, k.VAR_SET_CURRENT) or local:
        # Postgres checks the name and the value, and spells it canonically; SET LOCAL
        # … TO DEFAULT takes the value a RESET would give.
        value = ", ".join(_setting_text(a) for a in node.args or ())
        steps = ([Step("SELECT set_config($1, $2, true)", [encode_param(name),
                                                           encode_param(value)])]
                 if kind != k.VAR_SET_DEFAULT else
                 [Step("RESET " + quote_ident(name), [], rows=False),
                  Step("SELECT current_setting($1)", [encode_param(name)])])
        out = await sidecar.pipeline(st, steps)
        shown = out.rows[0].values[0]  # set_config and current_setting give text
        changed = settings.set(name, shown.decode() if shown is not None else "", local=local)
    else:  # RESET name, SET name TO DEFAULT
        changed = settings.reset(name)
    if name == "statement_timeout":
        capped = _capped(st)
        if capped is not None:
            result.notices.append(capped)
    result.parameters = await reported(st, changed)
    return result


async def reported(st: Statement, changed: list[str]) -> dict[str, str]:
    """The values now in effect of those ``changed`` settings a client sees in
    ParameterStatus, by the names Postgres reports them under."""
    known, names = reported_values(changed, st.settings)
    if names:  # back to the sidecar's default: it alone knows what that is
        out = await sidecar.pipeline(st, [Step(
            "SELECT " + ", ".join(f"current_setting(${i + 1})" for i in range(len(names))),
            [encode_param(n) for n in names])])
        known.update({REPORTED[n.lower()]: (v or b"").decode()
                      for n, v in zip(names, out.rows[0].values, strict=True)})
    return known


def _enforced(st: Statement, name: str) -> str | None:
    """What the server itself enforces, for a setting whose sidecar value would say
    otherwise: the statement timeout in effect, and the client connection's facts."""
    name = name.lower()
    if name == "statement_timeout":
        asked = st.settings.get("statement_timeout")
        if asked is not None and _capped(st) is None:
            return asked  # as Postgres spelled it
        return shown_duration(st.timeout_now())
    if name == "session_authorization":
        return st.user or None
    endpoint = st.endpoint
    if name == "ssl" and endpoint.port is not None:
        return "on" if endpoint.ssl else "off"
    if name == "port" and endpoint.port is not None:
        return str(endpoint.port)
    if name == "max_connections" and endpoint.max_connections is not None:
        return str(endpoint.max_connections)
    return None


def _capped(st: Statement) -> Notice | None:
    """The WARNING that the client's statement_timeout does not hold: the server's or
    the role's limit is lower (0, no limit, is never lifted); None when it holds."""
    asked = st.settings.get("statement_timeout")
    limit = st.timeout_now()
    if asked is None or (duration(asked) and duration(asked) <= limit):
        return None
    whose = ("this role's" if st.policy.statement_timeout
             and st.policy.statement_timeout < st.services.limits.statement_timeout
             else "the server's")
    return Notice(
        f"statement_timeout is {shown_duration(limit)} here, {whose} limit: {asked} does not "
        "take effect", "WARNING", errors.WARNING,
        hint=f"A statement is canceled after {shown_duration(limit)}; SET a lower value to "
        "cancel sooner. SHOW statement_timeout says what is enforced.")


def _isolation(st: Statement, name: str) -> str | None:
    """The session's isolation levels, by name (as SHOW spells them); None for any other
    setting, or for one the session has not set (the sidecar's, then)."""
    name = _SHOW_ALIASES.get(name.lower(), name.lower())
    if name not in ("default_transaction_isolation", "transaction_isolation"):
        return None
    default = st.settings.get("default_transaction_isolation")
    if name == "transaction_isolation" and st.tx.state is not TxState.IDLE:
        return st.tx.isolation or default
    return default


def _read_only(st: Statement, name: str) -> str | None:
    """The session's read-only settings, by name; None for any other setting."""
    name = name.lower()
    if name not in ("default_transaction_read_only", "transaction_read_only"):
        return None
    default = st.settings.get("default_transaction_read_only") or (
        "off" if st.writes else "on")
    if name == "transaction_read_only" and st.tx.state is not TxState.IDLE:
        return "on" if st.tx.read_only else "off"
    return default


async def pool_reset(st: Statement, node: Any) -> Result:
    """What connection pools send between clients; the wire drops its own state too.
    DISCARD ALL resets every setting and reports those a client sees, as RESET ALL."""
    if isinstance(node, ast.DiscardStmt):
        assert node.target is not None  # the parser sets every enum field
        result = Result("DISCARD " + node.target.name.removeprefix("DISCARD_"),
                        released=Released(None, None))
        if node.target == enums.DiscardMode.DISCARD_ALL:
            if st.tx.state is not TxState.IDLE:
                raise errors.ActiveSqlTransaction(
                    "DISCARD ALL cannot run inside a transaction block",
                    hint="COMMIT or ROLLBACK first; a pool sends it between clients.")
            result.parameters = await reported(st, st.session_settings.reset_all())
        return result
    if isinstance(node, ast.DeallocateStmt):
        one = None if node.isall or not node.name else frozenset((node.name,))
        return Result("DEALLOCATE" if one else "DEALLOCATE ALL", released=Released(one))
    if isinstance(node, ast.ClosePortalStmt):
        one = frozenset((node.portalname,)) if node.portalname else None
        return Result("CLOSE CURSOR" if one else "CLOSE CURSOR ALL",
                      released=Released(portals=one))
    return Result("UNLISTEN")
