"""A client's SQL text (a Query or a Parse) to its statements, bounded before any runs.

Rules:
- A text longer than ``max_statement_bytes`` is refused (54000) before it is parsed.
- A long text is parsed on a parser thread (``sql.parse.parse_later``), so that the
  event loop goes on serving the other clients meanwhile; a short one in the task, as
  its parse takes less than a thread hop would.
- A statement whose tree has more than ``max_statement_nodes`` nodes is refused
  (54001) before the gate and the planner, which walk every node in the task, see it:
  so the largest statement accepted holds the event loop a bounded time.
- Too deep a tree is refused (54001) by the parse itself. A recursion that still
  overflows Python's limit further on answers 54001 too (``error_of``), not XX000.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from glove_scratchpad import errors

from ..sql.parse import (
    MAX_DEPTH,
    OFF_LOOP_BYTES,
    SHALLOW_BYTES,
    ParsedStatement,
    parse,
    parse_later,
    too_many_nodes,
)
from .internal import internal_error

if TYPE_CHECKING:
    from ..config import ServerConfig

__all__ = ["error_of", "parsed"]

# A character takes at most this many bytes in UTF-8: a text this many times shorter
# than the limit is within it, without being encoded to be measured.
_MAX_CHAR_BYTES = 4


async def parsed(sql: str, config: ServerConfig) -> tuple[ParsedStatement, ...]:
    """The statements of a client's text, within the limits (errors.SqlError if not)."""
    size = len(sql)
    if size <= SHALLOW_BYTES:  # the usual statement: too short to be over either limit,
        return parse(sql)  # whose least values (ServerConfig's) are far above its size
    max_bytes, max_nodes = config.max_statement_bytes, config.max_statement_nodes
    if size * _MAX_CHAR_BYTES > max_bytes and (size > max_bytes
                                               or len(sql.encode()) > max_bytes):
        raise errors.ProgramLimitExceeded(
            f"statement is too long: more than {max_bytes} bytes (max_statement_bytes)",
            hint="Send the data as a prepared statement's parameters, or in several "
                 "statements; the operator may raise max_statement_bytes.")
    if size > OFF_LOOP_BYTES:
        statements = await asyncio.wrap_future(parse_later(sql, max_nodes))
    else:
        statements = parse(sql)
    nodes = sum(s.nodes for s in statements)
    if nodes > max_nodes:
        raise too_many_nodes(str(nodes), max_nodes)
    return statements


def error_of(exc: Exception, doing: str, what: str) -> errors.SqlError:
    """The error a client gets for ``exc``, raised by its statement and not a SQL error:
    a RecursionError is a statement nested too deeply for a walk of its tree (54001);
    anything else is our bug (``internal``: XX000, with its traceback in the log)."""
    if not isinstance(exc, RecursionError):
        return internal_error(exc, doing, what)
    return errors.StatementTooComplex(
        "statement is nested too deeply for the server to judge it",
        hint=f"Nest it less: at most {MAX_DEPTH} levels are allowed, and fewer may be "
             "judged; write a long chain of + or || as one function call.")
