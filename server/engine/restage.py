"""``SELECT scratchpad.restage(txid)``: a transaction's writes that did not fire, staged again.

Rules:
- It stages again, in the open transaction or a new one, the writes of a
  transaction that did not fire (``failed``, ``not run``, ``in doubt``), each
  with its own idempotency key. A key that has fired since, or is already
  staged, is skipped: a COMMIT of them skips nothing and repeats nothing.
- A write ``in doubt`` was sent and no answer told what it did (or its server
  died while it ran): it may have fired, and sending it again may do it twice.
  So restage refuses it, and the transaction's other writes with it, until told
  ``force => true``: the caller has checked that it did not take effect. Its
  tool then sees the first attempt's idempotency key, and a WARNING says so.
- A write a chain planned at COMMIT from what an earlier write returned is not
  staged again without those rows: the statement that staged it is run again.
- It calls no tool, and reads only the caller's own journal rows (an
  administrator's: everyone's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from pglast import ast

from glove_scratchpad import errors
from glove_scratchpad.resources import Resource

from .cache import call_number
from .result import Call, Notice, Result, StagedWrite
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["param_types", "restage", "restage_force", "restage_txid", "restaged_write"]

_RESTAGEABLE = ("failed", "not run", "in doubt")
_LEFT = {"staged": "not run", "firing": "in doubt"}  # what a server that died left so was
_TRUE = frozenset({"t", "true", "on", "1", "yes", "y"})
_FALSE = frozenset({"f", "false", "off", "0", "no", "n"})
_BIGINT, _BOOLEAN, _TEXT = 20, 16, 25  # type oids
_DECISIONS = ("approve", "deny")  # (id, comment): a request's number, then text


def param_types(call: ast.FuncCall, name: str) -> tuple[int, ...]:
    """The types of a system call's ``$n`` (for a Describe that gave none): restage's
    transaction id is a bigint and its force a boolean; refresh's table a name; approve's
    and deny's request id a bigint and their comment text."""
    types: dict[int, int] = {}
    for i, arg in enumerate(call.args or ()):
        if isinstance(arg, ast.NamedArgExpr):
            arg = arg.arg
        if isinstance(arg, ast.TypeCast):
            arg = arg.arg
        if isinstance(arg, ast.ParamRef) and arg.number:
            types[arg.number] = (_TEXT if name == "refresh" or (i and name in _DECISIONS)
                                 else _BIGINT if i == 0 else _BOOLEAN)
    return tuple(types.get(n, 0) for n in range(1, max(types, default=0) + 1))


def restage_txid(call: ast.FuncCall, params: list[Any], system: str) -> int:
    """The transaction id ``scratchpad.restage(…)`` was given (a number, or ``$n``)."""
    raw = call_number(call, params)
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise errors.InvalidParameterValue(
            f"{system}.restage() takes a transaction id, not {raw!r}",
            hint=f"SELECT DISTINCT txid, status FROM {system}.journal lists your "
            "transactions.") from None


def restage_force(call: ast.FuncCall, params: list[Any], system: str) -> bool:
    """``force``, restage's second argument (a boolean, or ``$n``); false if not given."""
    args = list(call.args or ())
    if len(args) < 2:
        return False
    arg = args[1].arg if isinstance(args[1], ast.NamedArgExpr) else args[1]
    if isinstance(arg, ast.TypeCast):
        arg = arg.arg
    if isinstance(arg, ast.A_Const) and isinstance(arg.val, ast.Boolean):
        return bool(arg.val.boolval)
    value: Any = None
    if isinstance(arg, ast.ParamRef) and arg.number and 0 < arg.number <= len(params):
        param = params[arg.number - 1]
        value = getattr(param, "value", param)
        if isinstance(value, bytes) and getattr(param, "format", 0) == 1:
            value = value != b"\x00"  # a binary boolean: one byte
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, bool):
        return value
    raise errors.InvalidParameterValue(
        f"{system}.restage()'s force is a boolean, not {value!r}",
        hint=f"SELECT {system}.restage(17, force => true)")


async def restage(st: Statement, call: ast.FuncCall, params: list[Any]) -> Result:
    """``SELECT scratchpad.restage(txid [, force => true])``: the writes of a transaction
    that did not fire, staged again (with their idempotency keys) in the open transaction
    or a new one; one in doubt only with ``force``."""
    system = st.services.schemas.system
    txid = restage_txid(call, params, system)
    force = restage_force(call, params, system)
    if not st.writes or st.tx.read_only:
        raise errors.ReadOnlySqlTransaction(
            "cannot restage writes in a read-only transaction",
            hint="Writes are not allowed here: end the READ ONLY transaction, or start the "
            "server with --writes.")
    journal = st.services.journal
    if not journal.enabled:
        raise errors.FeatureNotSupported("this server keeps no commit journal",
                                         hint="Run the writes again in a new transaction.")
    if txid in journal.committing:
        raise errors.InvalidTransactionState(
            f"transaction {txid} is still committing",
            hint=f"Wait for its COMMIT to end: SELECT seq, status FROM {system}.journal "
            f"WHERE txid = {txid}.")
    rows = await journal.read(None if st.policy.admin else st.user, [txid])
    if not rows:
        raise errors.InvalidParameterValue(
            f"transaction {txid} is not in your journal",
            hint=f"SELECT DISTINCT txid, status FROM {system}.journal lists your "
            "transactions.")
    todo = [r for r in rows if _LEFT.get(r["status"], r["status"]) in _RESTAGEABLE]
    # A chain's write planned from what an earlier write returned cannot be sent again
    # without it: the statement that staged it is run again instead.
    waiting = [r for r in todo if (r["arguments"] or {}).get("deferred")]
    todo = [r for r in todo if r not in waiting]
    taken = {c.key for w in st.tx.staged for c in w.calls}
    fired = await journal.fired_keys([r["idempotency_key"] for r in todo])
    todo = [r for r in todo if r["idempotency_key"] not in fired | taken]
    doubtful = [r for r in todo if _LEFT.get(r["status"], r["status"]) == "in doubt"]
    if doubtful and not force:
        _refuse(system, txid, doubtful)
    skipped = [Notice(
        f"not staged again: seq {r['seq']} ({r['resource']} {r['verb']}) was "
        f"{(r['arguments'] or {})['deferred']}, which did not fire",
        hint=f"Run the statement again: {r['statement'][:200]}") for r in waiting]
    if not todo:
        return Result.text("SELECT 1", ["restage"], [(
            f"nothing to stage: every write of transaction {txid} has fired or is staged",)],
            staged=list(st.tx.staged), notices=skipped)
    writes = [restaged_write(st, r) for r in todo]
    if st.tx.state is TxState.IDLE:
        st.tx.begin(read_only=False)
    notices = list(skipped)
    for write, row in zip(writes, todo, strict=True):
        st.tx.staged.append(write)
        was = _LEFT.get(row["status"], row["status"])
        doubt = was == "in doubt"
        notices.append(Notice(
            f"staged #{write.id} again: {write.summary} ({system}.journal txid {txid}, "
            f"seq {row['seq']}, {was}), with its idempotency key {row['idempotency_key']}",
            severity="WARNING" if doubt else "NOTICE",
            hint="It may have fired before: its tool sees the same idempotency key, and can "
            "tell this retry from a new request." if doubt else None))
    n = len(writes)
    return Result.text("SELECT 1", ["restage"], [(
        f"staged {n} write{'s' if n != 1 else ''} of transaction {txid} again: COMMIT fires "
        "them, ROLLBACK discards them",)], notices=notices, staged=list(st.tx.staged))


def _refuse(system: str, txid: int, doubtful: list[dict[str, Any]]) -> NoReturn:
    """Why a write in doubt is not staged again without ``force``."""
    first = doubtful[0]
    seqs = ", ".join(str(r["seq"]) for r in doubtful)
    raise errors.InvalidTransactionState(
        f"transaction {txid} has a write in doubt, so nothing of it is staged again: seq "
        f"{first['seq']} ({first['resource']} {first['verb']}) may have fired, and "
        "staging it again could make it happen twice",
        detail=f"in doubt: seq {seqs}; " + (first["error"] or "its server stopped while it "
                                            "ran")[:500],
        hint=f"Read {first['resource']} to see whether it took effect. Only if it did not, "
        f"SELECT {system}.restage({txid}, force => true) stages it again, with the same "
        "idempotency key, and the writes after it; if it did, run what is left yourself.")


def restaged_write(st: Statement, row: dict[str, Any], *, seen: bool = True) -> StagedWrite:
    """A journaled write (resource, verb, arguments, idempotency_key, statement) staged
    again; ``seen``: only if the statement's view sees its resource."""
    name = row["resource"]
    resource = st.services.resources.get(name)
    if resource is None or (seen and st.lookup(None, name) is None):
        raise errors.UndefinedTable(
            f'relation "{name}" does not exist: a write of this transaction cannot be '
            "staged again", hint="Its resource is no longer served.")
    verb, args = row["verb"], row["arguments"] or {}
    key = row["idempotency_key"]
    if verb == "insert":
        rows = [_typed(resource, row, convert=False) for row in args.get("rows", [])]
        call = Call("insert", rows=tuple(resource.validate_insert_rows(rows)), key=key)
    else:
        where = {c: tuple((op, _typed_value(resource, c, v)) for op, v in conds)
                 for c, conds in (args.get("conditions") or {}).items()} or None
        call = Call(verb, changes=_typed(resource, args.get("set", {}))
                    if verb == "update" else None,
                    bindings=_typed(resource, args.get("where", {})), where=where, key=key)
    return StagedWrite(st.next_write_id(), name, verb, row["statement"], [call])


def _typed_value(resource: Resource, name: str, value: Any) -> Any:
    """A condition's value read back from JSON: a list (IN) item by item."""
    if isinstance(value, list):
        return [_typed(resource, {name: v})[name] for v in value]
    return _typed(resource, {name: value})[name]


def _typed(resource: Resource, values: dict[str, Any], convert: bool = True
           ) -> dict[str, Any]:
    """Values read back from JSON, as their columns' Python types (``convert``; else
    only bytes, which the journal keeps as hex, are made bytes again)."""
    out = {}
    for name, value in values.items():
        column = resource.column(name)
        if value is None or column is None:
            out[name] = value
            continue
        if column.pg_type == "bytea" and isinstance(value, str):
            value = bytes.fromhex(value)
        out[name] = column.convert(value) if convert else value
    return out
