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
from . import run as sidecar
from .result import Notice, Result
from .session_settings import REPORTED, reported_values
from .transaction import TxState

if TYPE_CHECKING:
    from .session import Session

__all__ = ["isolation_option", "pool_reset", "read_only_option", "reported", "setting"]

_SHOW_ALIASES = {"transaction isolation level": "transaction_isolation"}
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


async def setting(session: Session, node: Any, sql: str) -> Result:
    """SET, RESET and SHOW: kept in the session, checked and applied by Postgres."""
    settings = session.tx.settings
    if isinstance(node, ast.VariableShowStmt):
        name = node.name or ""  # SHOW ALL is refused by the gate
        own = _read_only(session, name) or _isolation(session, name)
        if own is not None:
            return Result.text("SHOW", [name], [(own,)])
        step = Step("SELECT current_setting($1) AS " + quote_ident(name),
                    [encode_param(_SHOW_ALIASES.get(name, name))])
        return sidecar.result_of(session, "SHOW", await sidecar.pipeline(session, [step]))
    kind, name = node.kind, canonical_setting(node.name or "")
    k = enums.VariableSetKind
    result = Result("RESET" if sql.lstrip()[:5].upper() == "RESET" else "SET")
    tx = session.tx
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
    if local and session.tx.state is TxState.IDLE:
        result.notices.append(Notice("SET LOCAL can only be used in transaction blocks",
                                     "WARNING", "25P01"))
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
        out = await sidecar.pipeline(session, steps)
        changed = settings.set(name, out.rows[0].values[0].decode(), local=local)
    else:  # RESET name, SET name TO DEFAULT
        changed = settings.reset(name)
    result.parameters = await reported(session, changed)
    return result


async def reported(session: Session, changed: list[str]) -> dict[str, str]:
    """The values now in effect of those ``changed`` settings a client sees in
    ParameterStatus, by the names Postgres reports them under."""
    known, names = reported_values(changed, session.settings)
    if names:  # back to the sidecar's default: it alone knows what that is
        out = await sidecar.pipeline(session, [Step(
            "SELECT " + ", ".join(f"current_setting(${i + 1})" for i in range(len(names))),
            [encode_param(n) for n in names])])
        known.update({REPORTED[n.lower()]: (v or b"").decode()
                      for n, v in zip(names, out.rows[0].values, strict=True)})
    return known


def _isolation(session: Session, name: str) -> str | None:
    """The session's isolation levels, by name (as SHOW spells them); None for any other
    setting, or for one the session has not set (the sidecar's, then)."""
    name = _SHOW_ALIASES.get(name.lower(), name.lower())
    if name not in ("default_transaction_isolation", "transaction_isolation"):
        return None
    default = session.settings.get("default_transaction_isolation")
    if name == "transaction_isolation" and session.tx.state is not TxState.IDLE:
        return session.tx.isolation or default
    return default


def _read_only(session: Session, name: str) -> str | None:
    """The session's read-only settings, by name; None for any other setting."""
    name = name.lower()
    if name not in ("default_transaction_read_only", "transaction_read_only"):
        return None
    default = session.settings.get("default_transaction_read_only") or (
        "off" if session.writes else "on")
    if name == "transaction_read_only" and session.tx.state is not TxState.IDLE:
        return "on" if session.tx.read_only else "off"
    return default


async def pool_reset(session: Session, node: Any) -> Result:
    """What connection pools send between clients; the wire drops its own state too.
    DISCARD ALL resets every setting and reports those a client sees, as RESET ALL."""
    if isinstance(node, ast.DiscardStmt):
        assert node.target is not None  # the parser sets every enum field
        result = Result("DISCARD " + node.target.name.removeprefix("DISCARD_"))
        if node.target == enums.DiscardMode.DISCARD_ALL:
            if session.tx.state is not TxState.IDLE:
                raise errors.ActiveSqlTransaction(
                    "DISCARD ALL cannot run inside a transaction block",
                    hint="COMMIT or ROLLBACK first; a pool sends it between clients.")
            result.parameters = await reported(session, session.tx.settings.reset_all())
        return result
    if isinstance(node, ast.DeallocateStmt):
        return Result("DEALLOCATE ALL" if node.isall or not node.name else "DEALLOCATE")
    if isinstance(node, ast.ClosePortalStmt):
        return Result("CLOSE CURSOR ALL" if not node.portalname else "CLOSE CURSOR")
    return Result("UNLISTEN")
