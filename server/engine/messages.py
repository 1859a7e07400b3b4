"""The errors the interpreter raises about resources, each complete with its HINT.

Rules:
- Every message a model may read names the next step.
- A required key is bound only by ``=``, ``IN`` and ``= ANY`` (or a join
  equality); a condition of another kind on it gets a message that says so and
  shows the statement rewritten that way.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.redaction import redact_secrets
from glove_scratchpad.resources import Resource

__all__ = ["missing_key", "missing_verb", "quoted_value", "resolver_failed", "set_column"]

log = logging.getLogger(__name__)

_UNDEFINED_COLUMN = re.compile(r'column "(.+)" does not exist')


def missing_key(resource: Resource, key: str, conditions: tuple[str, ...] = (),
                feeder: str | None = None) -> errors.SqlError:
    """A required key with no value: ``conditions`` are the ones on it that cannot bind;
    ``feeder`` a join of the statement's that could feed it."""
    example = " AND ".join(f"{k} = '…'" for k in resource.keys)
    column = resource.column(key)
    about = f" ({column.description})" if column is not None and column.description else ""
    if conditions:
        return errors.MissingRequiredKey(
            f'resource "{resource.name}" needs a value for its required key "{key}"{about}; '
            f"the condition {conditions[0]} does not give it one",
            detail="A required key is a tool's argument: only key = value, key IN (…), "
            "key = ANY(…) or an equality with another table's column bind it. LIKE, <>, "
            "ranges and OR do not.",
            hint=f"Call once per value instead, e.g. SELECT * FROM {resource.name} WHERE "
            f"{key} IN ('a', 'b'); filter the rows further in an outer query.",
            table_name=resource.name,
            column_name=key,
        )
    hint = f"Add it to the WHERE clause, e.g. SELECT * FROM {resource.name} WHERE {example}"
    if feeder is not None:
        hint += f"; or let another table's column feed it: {feeder}"
    return errors.MissingRequiredKey(
        f'resource "{resource.name}" needs a value for its required key "{key}"{about}',
        detail=f"Required keys are the tool's arguments: {', '.join(resource.keys)}. A key "
        "is bound by key = value, key IN (…), key = ANY(…), or an equality with another "
        "table's column (a join, LATERAL or a correlated subquery).",
        hint=hint,
        table_name=resource.name,
        column_name=key,
    )


def missing_verb(resource: Resource, verb: str) -> errors.SqlError:
    sql_verbs = ", ".join(v.upper() for v in resource.verbs)
    action = {"select": "read", "insert": "inserted into", "update": "updated",
              "delete": "deleted from"}[verb]
    return errors.WrongObjectType(
        f'resource "{resource.name}" cannot be {action}: it supports {sql_verbs}',
        hint=f"Use one of: {sql_verbs}.",
        table_name=resource.name,
    )


def resolver_failed(resource: Resource, verb: str, exc: BaseException) -> errors.SqlError:
    log.info("resolver %s.%s failed", resource.name, verb, exc_info=exc)
    return errors.ExternalRoutineError(
        redact_secrets(f'resource "{resource.name}" failed in {verb}: '
                       f"{type(exc).__name__}: {exc}")[:1000],
        hint="The tool behind this table reported the error; check the arguments against "
        f"the column descriptions (\\d+ {resource.name}), or try again.",
        table_name=resource.name,
    )


def set_column(resource: Resource, name: str) -> Any:
    """The column an UPDATE's SET names, or 42703."""
    column = resource.column(name)
    if column is None:
        raise errors.UndefinedColumn(
            f'column "{name}" of relation "{resource.name}" does not exist',
            hint=f"\\d {resource.name} lists its columns.",
        )
    return column


def quoted_value(exc: errors.SqlError, sql: str) -> errors.SqlError:
    """An unknown column that the statement wrote in double quotes, where a string value
    was meant (``WHERE name = "Ada"``): the error, with a hint that says so."""
    quoted = _UNDEFINED_COLUMN.fullmatch(exc.message)
    if exc.hint or quoted is None or f'"{quoted.group(1)}"' not in sql:
        return exc
    return exc.replaced(hint=f"Double quotes name a column; a string value takes single "
                        f"quotes: '{quoted.group(1)}'.")
