"""SQL-level errors, each a class carrying its SQLSTATE.

Every layer raises these; the wire layer turns them into ErrorResponse fields
one-to-one, and the Python API shows them the way psql does. Raise sites never
spell a SQLSTATE by hand: they pick the class. A message a model may read names
the next step in its ``hint``.

Classes register by code (``class UndefinedTable(SqlError, code="42P01")``), so
an error relayed from the sidecar becomes the matching class, falling back to
the class of its two-character SQLSTATE prefix, then to ``SqlError``.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ActiveSqlTransaction",
    "CardinalityViolation",
    "ExternalRoutineError",
    "FeatureNotSupported",
    "InFailedSqlTransaction",
    "InsufficientPrivilege",
    "InternalError",
    "InvalidCatalogName",
    "InvalidParameterValue",
    "InvalidTextRepresentation",
    "IoError",
    "MissingRequiredKey",
    "NoActiveSqlTransaction",
    "ProgramLimitExceeded",
    "QueryCanceled",
    "ReadOnlySqlTransaction",
    "SqlError",
    "StatementTooComplex",
    "SyntaxError",
    "TransactionResolutionUnknown",
    "UndefinedColumn",
    "UndefinedFunction",
    "UndefinedTable",
    "WrongObjectType",
    "error_class",
    "message_fields",
]

# ErrorResponse and NoticeResponse fields, keyword -> one-letter code ("Error and Notice
# Message Fields" in the protocol's documentation). The wire codec uses the same table.
FIELD_CODES = {
    "severity": "S",
    "severity_nonlocalized": "V",
    "code": "C",
    "message": "M",
    "detail": "D",
    "hint": "H",
    "position": "P",
    "internal_position": "p",
    "internal_query": "q",
    "where": "W",
    "schema_name": "s",
    "table_name": "t",
    "column_name": "c",
    "data_type_name": "d",
    "constraint_name": "n",
    "file": "F",
    "line": "L",
    "routine": "R",
}
# What an error relayed from the sidecar keeps beyond its own attributes: not the
# sidecar's source location (file, line, routine).
_EXTRA_CODES = {name: c for name, c in FIELD_CODES.items() if c not in "SVCMDHPFLR"}


def message_fields(severity: str, code: str, message: str, detail: str | None = None,
                   hint: str | None = None, position: int | None = None,
                   **other: Any) -> dict[str, str]:
    """An ErrorResponse's or NoticeResponse's fields by one-letter code, V repeating S as
    Postgres sends both. ``other`` takes FIELD_CODES keywords or one-letter codes."""
    out = {"S": severity, "V": severity, "C": code, "M": message}
    if detail:
        out["D"] = detail
    if hint:
        out["H"] = hint
    if position is not None:
        out["P"] = str(position)
    for name, value in other.items():
        letter = FIELD_CODES.get(name, name if len(name) == 1 else None)
        if letter and value is not None:
            out[letter] = str(value)
    return out


_by_code: dict[str, type[SqlError]] = {}


class SqlError(Exception):
    """An error a client sees as an ErrorResponse (or a NoticeResponse, by severity)."""

    sqlstate: ClassVar[str] = "XX000"

    def __init_subclass__(cls, code: str | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if code is not None:
            cls.sqlstate = code
            _by_code[code] = cls

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        severity: str = "ERROR",
        sqlstate: str | None = None,
        **fields: str,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        self.severity = severity
        if sqlstate is not None:
            self.sqlstate = sqlstate  # type: ignore[misc]
        self.fields = fields

    def as_fields(self) -> dict[str, str]:
        """The ErrorResponse fields, keyed by their one-letter codes."""
        return message_fields(self.severity, self.sqlstate, self.message, self.detail,
                              self.hint, self.position, **self.fields)

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> SqlError:
        """Rebuild an error from ErrorResponse fields, keeping every one."""
        code = fields.get("C", "XX000")
        klass = error_class(code)
        extra = {name: fields[c] for name, c in _EXTRA_CODES.items() if c in fields}
        position = fields.get("P")
        return klass(
            fields.get("M", ""),
            detail=fields.get("D"),
            hint=fields.get("H"),
            position=int(position) if position and position.isdigit() else None,
            severity=fields.get("V", fields.get("S", "ERROR")),
            sqlstate=code,
            **extra,
        )

    def replaced(self, **changes: Any) -> SqlError:
        """A new error of the same class with some fields changed (``position``,
        ``hint``, ``message``…): an error is never changed after it is raised."""
        new = Exception.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name, value in changes.items():
            setattr(new, name, value)
        new.args = (new.message,)
        return new

    def __str__(self) -> str:
        # Shown the way psql shows it.
        text = self.message
        if self.detail:
            text += f"\nDETAIL:  {self.detail}"
        if self.hint:
            text += f"\nHINT:  {self.hint}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sqlstate}: {self.message!r})"


def error_class(code: str) -> type[SqlError]:
    """The class registered for a SQLSTATE, else for its class prefix, else SqlError."""
    return _by_code.get(code) or _by_code.get(code[:2] + "000") or SqlError


# Registered classes, by SQLSTATE class.
class FeatureNotSupported(SqlError, code="0A000"):
    pass


class ProtocolViolation(SqlError, code="08P01"):
    pass


class DataException(SqlError, code="22000"):
    pass


class CardinalityViolation(SqlError, code="21000"):
    pass


class CharacterNotInRepertoire(SqlError, code="22021"):
    pass


class InvalidParameterValue(SqlError, code="22023"):
    pass


class MissingRequiredKey(InvalidParameterValue):
    """A resource read or write without a value for one of its required keys."""


class InvalidTextRepresentation(SqlError, code="22P02"):
    pass


class IntegrityConstraintViolation(SqlError, code="23000"):
    pass


class NotNullViolation(IntegrityConstraintViolation, code="23502"):
    pass


class UniqueViolation(IntegrityConstraintViolation, code="23505"):
    pass


class InvalidTransactionState(SqlError, code="25000"):
    pass


class ActiveSqlTransaction(SqlError, code="25001"):
    pass


class ReadOnlySqlTransaction(SqlError, code="25006"):
    pass


class NoActiveSqlTransaction(SqlError, code="25P01"):
    pass


class InFailedSqlTransaction(SqlError, code="25P02"):
    pass


class InvalidSqlStatementName(SqlError, code="26000"):
    pass


class InvalidAuthorizationSpecification(SqlError, code="28000"):
    pass


class InvalidPassword(SqlError, code="28P01"):
    pass


class InvalidCursorName(SqlError, code="34000"):
    pass


class InvalidCatalogName(SqlError, code="3D000"):
    pass


class InvalidSavepointSpecification(SqlError, code="3B001"):
    pass


class ExternalRoutineError(SqlError, code="38000"):
    """A resolver (a tool) failed, or returned rows that do not fit its schema."""


class ProhibitedSqlStatementAttempted(ExternalRoutineError, code="38003"):
    """A person denied the writes a COMMIT asked to send (docs/approvals.md)."""


class SyntaxErrorOrAccessRuleViolation(SqlError, code="42000"):
    pass


class SyntaxError(SqlError, code="42601"):
    pass


class InsufficientPrivilege(SqlError, code="42501"):
    pass


class UndefinedColumn(SqlError, code="42703"):
    pass


class DuplicateColumn(SqlError, code="42701"):
    pass


class UndefinedFunction(SqlError, code="42883"):
    pass


class WrongObjectType(SqlError, code="42809"):
    pass


class UndefinedTable(SqlError, code="42P01"):
    pass


class DuplicateCursor(SqlError, code="42P03"):
    pass


class UndefinedParameter(SqlError, code="42P02"):
    """A $n with no value given (a DECLARE's query)."""


class DuplicateTable(SqlError, code="42P07"):
    pass


class DuplicatePreparedStatement(SqlError, code="42P05"):
    pass


class OutOfMemory(SqlError, code="53200"):
    """A budget of the server's memory is spent (bytes of messages not yet received whole)."""


class TooManyConnections(SqlError, code="53300"):
    """No connection slot is free to this client (``server/net/slots.py``)."""


class ConfigurationLimitExceeded(SqlError, code="53400"):
    pass


class ProgramLimitExceeded(SqlError, code="54000"):
    pass


class ObjectNotInPrerequisiteState(SqlError, code="55000"):
    """A cursor asked to step back when it can only scan forward (NO SCROLL)."""


class QueryCanceled(SqlError, code="57014"):
    pass


class AdminShutdown(SqlError, code="57P01"):
    """The sidecar's backend was terminated (its postmaster died or shut down)."""


class CrashShutdown(SqlError, code="57P02"):
    """The sidecar's backend ended because another one crashed."""


class CannotConnectNow(SqlError, code="57P03"):
    """The sidecar is starting up or shutting down."""


class ConnectionException(SqlError, code="08000"):
    pass


class SqlclientUnableToEstablishSqlconnection(SqlError, code="08001"):
    pass


class ConnectionDoesNotExist(SqlError, code="08003"):
    pass


class ConnectionFailure(SqlError, code="08006"):
    """The connection to the sidecar was lost, or could not be made again in time."""


class TransactionResolutionUnknown(SqlError, code="08007"):
    """A write was sent and no answer came (a timeout, a connection lost after sending):
    it may have happened. Journaled ``in doubt``; never to be sent again blindly."""


class IoError(SqlError, code="58030"):
    """A service the server depends on failed (an HTTP API answering 5xx)."""


class InternalError(SqlError, code="XX000"):
    pass


class StatementTooComplex(SqlError, code="54001"):
    """A statement nested too deeply, or with too many parts, to be judged safely."""


# -- Codes that are not raised -------------------------------------------------------
# A notice carries a SQLSTATE too (``Notice.code``), and an outcome is counted, logged
# and decided by its class: a code's first two characters (``sqlstate_class``). Named
# as in Postgres' "PostgreSQL Error Codes" appendix.
SUCCESSFUL_COMPLETION = "00000"
WARNING = "01000"
CLASS_SUCCESSFUL_COMPLETION = "00"
CLASS_CONNECTION_EXCEPTION = "08"
CLASS_DATA_EXCEPTION = "22"
CLASS_INTEGRITY_CONSTRAINT_VIOLATION = "23"
CLASS_OPERATOR_INTERVENTION = "57"


def sqlstate_class(code: str) -> str:
    """A SQLSTATE's class: its first two characters (``"08"`` of ``"08006"``)."""
    return code[:2]
