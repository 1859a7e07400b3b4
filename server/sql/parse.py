"""Parsing, cached by SQL text: one statement text in, its pglast trees out. No I/O.

Rules:
- A parse error is a 42601 with the position in the client's text.
- A text with several statements is cut into one ``ParsedStatement`` each, with
  its own text (positions relative to it) and where it starts in the whole.
- No text crashes the process, nor reaches the rest of the server nested deeper
  than ``MAX_DEPTH`` (54001). pglast builds its Python tree recursively in C, and
  the gate, the planner and the rewrite walk that tree recursively in Python.
  A text longer than ``OFF_LOOP_BYTES`` is parsed on a thread of its own with a
  large stack (``parse_later``), once libpg_query's serializer, which checks its
  own stack, has found it not too deep; a shorter text cannot nest deep enough to
  harm the caller's stack. A run of operator characters longer than
  ``MAX_OPERATOR_RUN``, which the lexer reads in quadratic time, is refused (54001)
  before it is parsed. The tree of a text longer than ``SHALLOW_BYTES`` is
  measured (``ParsedStatement.nodes``, and its depth) before it is returned; how
  many nodes a statement may have is the caller's to judge (``parse_later`` refuses
  a text sure to have more than its limit before pglast builds the tree).
"""

from __future__ import annotations

import functools
import os
import queue
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums, parse_sql
from pglast.parser import ParseError, parse_sql_json

from glove_scratchpad import errors

from .statement_kinds import statement_name

__all__ = ["MAX_DEPTH", "OFF_LOOP_BYTES", "PARSE_CACHE_SIZE", "SHALLOW_BYTES", "ParsedStatement",
           "command_kind", "is_script", "parse", "parse_later", "too_many_nodes"]

PARSE_CACHE_SIZE = 4096  # distinct SQL texts whose parse trees are kept
# How deep a tree's nodes may nest. The server's own walks of a tree recurse in Python,
# a frame or two a level, under Python's limit of 1000 frames: they fail from about 600
# levels (nested subqueries, NOT, function calls), so this keeps half of that in hand.
# Postgres's clients rarely nest a tenth as deep.
MAX_DEPTH = 200
# A text this short nests no deeper than MAX_DEPTH: each level takes one byte of it at
# least ("-+-+-+1" nests a prefix operator a byte), so its tree need not be measured.
SHALLOW_BYTES = MAX_DEPTH
# Longer texts are parsed on a parser thread (``parse_later``): their parse takes
# milliseconds, and, shorter, they nest at most 8,192 levels, which pglast's recursive
# build of the tree (some 340 bytes of C stack a level) turns into Python objects on any
# thread's stack of 4 MiB.
OFF_LOOP_BYTES = 8 * 1024
# The parser threads' stack. libpg_query refuses deeper than some 16,400 levels (its
# serializer checks its stack: "stack depth limit exceeded"; the grammar stops at 10,000
# open levels: "memory exhausted"), and pglast needs some 340 bytes a level to build them.
PARSER_STACK_BYTES = 64 * 1024 * 1024
PARSER_THREADS = 2  # a huge text parses on one while another client's parses on the other
# Postgres's lexer reads a run of operator characters whole, then gives back all but its
# first when they end in + or - ("-+-+1" nests prefix operators): a run costs it the
# square of its length (a run of 8,192 takes half a second). No operator is longer than
# 63 characters; this leaves room for a literal's long line of dashes.
MAX_OPERATOR_RUN = 512
_OPERATOR_RUN = re.compile(f"[-+*/<>=~!@#%^&|`?]{{{MAX_OPERATOR_RUN}}}")
_TOO_DEEP = "stack depth limit exceeded"  # libpg_query's words when its stack check fails
_LESS_NESTING = ("Write it with less nesting: a long chain of + or || as one function "
                 "call (sum over VALUES, concat), nested subqueries as WITH.")


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    sql: str
    node: Any
    offset: int = 0  # where ``sql`` starts in the query string it came from
    nodes: int = 0  # how many nodes its tree has; 0: not counted (a text of SHALLOW_BYTES)

    @property
    def commits(self) -> bool:
        """Whether it is COMMIT (or END), which a cancel does not stop."""
        return (isinstance(self.node, ast.TransactionStmt)
                and self.node.kind == enums.TransactionStmtKind.TRANS_STMT_COMMIT)


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def parse(sql: str) -> tuple[ParsedStatement, ...]:
    """The statements of a SQL text, each with its own text (positions relative to it).
    A long text is parsed on a parser thread, waited for (``parse_later`` awaits it)."""
    if len(sql) >= MAX_OPERATOR_RUN and _OPERATOR_RUN.search(sql):
        raise errors.StatementTooComplex(
            f"statement has a run of more than {MAX_OPERATOR_RUN} operator characters",
            hint="Put spaces between operators; pass a literal that holds such a run as "
                 "a parameter.")
    if len(sql) > OFF_LOOP_BYTES and threading.current_thread() not in _PARSER.threads:
        return parse_later(sql).result()
    if len(sql) > OFF_LOOP_BYTES:
        _check_depth(sql)
    try:
        raw = parse_sql(sql)
    except ParseError as exc:
        message, index = exc.args[0], exc.args[1] if len(exc.args) > 1 else None
        raise errors.SyntaxError(
            message,
            position=index + 1 if isinstance(index, int) else None,
            hint="Check the statement against PostgreSQL's grammar.",
        ) from None
    if len(raw) == 1:
        return (_measured(sql, raw[0].stmt),)
    out = []
    for stmt in raw:
        start = stmt.stmt_location or 0
        end = start + stmt.stmt_len if stmt.stmt_len else len(sql)
        chunk = sql[start:end]
        text = chunk.strip().rstrip(";")
        offset = start + len(chunk) - len(chunk.lstrip())
        out.append(_measured(text, parse_sql(text)[0].stmt, offset))
    return tuple(out)


def parse_later(sql: str, max_nodes: int | None = None
                ) -> Future[tuple[ParsedStatement, ...]]:
    """``parse(sql)`` on a parser thread, with its large stack: what a caller that must
    not wait (the event loop) awaits. With ``max_nodes``, a text whose tree is sure to
    have more is refused (54001) before pglast builds it, which takes the GIL and much
    memory: libpg_query's JSON of it has more than ``JSON_OBJECTS_A_NODE`` objects a
    node allowed. The caller counts the nodes of what is returned."""
    if max_nodes is None:
        return _PARSER.submit(parse, sql)
    return _PARSER.submit(functools.partial(_parse_within, max_nodes=max_nodes), sql)


# A node is two or three objects of libpg_query's JSON ({"A_Const": {"ival": {…}}}):
# a text whose JSON has this many times more objects than its limit of nodes is surely
# over it, and is refused before pglast builds it.
JSON_OBJECTS_A_NODE = 4


def _parse_within(sql: str, max_nodes: int) -> tuple[ParsedStatement, ...]:
    objects = _check_depth(sql)
    if objects > JSON_OBJECTS_A_NODE * max_nodes:
        raise too_many_nodes(f"more than {max_nodes}", max_nodes)
    return parse(sql)


def too_many_nodes(found: str, max_nodes: int) -> errors.SqlError:
    return errors.StatementTooComplex(
        f"statement is too complex: {found} parts of its parse tree, at most {max_nodes} "
        "(max_statement_nodes)",
        hint="Split it into several statements (a long IN list into several shorter "
             "ones); the operator may raise max_statement_nodes.")


def _check_depth(sql: str) -> int:
    """libpg_query's word on how deep a text nests, before pglast builds its tree: its
    serializer checks its stack as it goes, in C, without the GIL. The number of objects
    of its JSON, counted where they open (inside a string a quote is escaped); 0 for a
    syntax error, which is left to ``parse``."""
    try:
        return parse_sql_json(sql).count('{"')
    except ParseError as exc:
        if _TOO_DEEP in str(exc.args[0]):
            raise _too_deep(None) from None
    return 0


def _measured(sql: str, node: Any, offset: int = 0) -> ParsedStatement:
    """The statement, with its number of nodes; 54001 if they nest deeper than MAX_DEPTH."""
    if len(sql) <= SHALLOW_BYTES:
        return ParsedStatement(sql, node, offset)
    nodes, depth = _shape(node)
    if depth > MAX_DEPTH:
        raise _too_deep(depth)
    return ParsedStatement(sql, node, offset, nodes)


def _too_deep(depth: int | None) -> errors.SqlError:
    found = f" ({depth} levels)" if depth is not None else ""
    return errors.StatementTooComplex(
        f"statement is nested too deeply{found}: at most {MAX_DEPTH} levels are allowed",
        hint=_LESS_NESTING)


_LEAVES = (str, int, float)  # a bool is an int, an enum an int or a str


def _shape(root: Any) -> tuple[int, int]:
    """How many nodes a tree has, and how deep they nest: a loop, not a recursion."""
    node_type, sequence = ast.Node, (tuple, list)
    stack: list[tuple[Any, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    nodes = depth = 0
    while stack:
        node, level = pop()
        if isinstance(node, node_type):
            nodes += 1
            if level > depth:
                depth = level
            for name in node:  # a node iterates over its __slots__
                value = getattr(node, name)
                if value is not None and not isinstance(value, _LEAVES):
                    push((value, level + 1))
        elif isinstance(node, sequence):
            for item in node:
                push((item, level))
    return nodes, depth


class _Parsers:
    """Threads with a large stack that run parses handed to them, started on first use."""

    def __init__(self, count: int, stack_bytes: int) -> None:
        self.count, self.stack_bytes = count, stack_bytes
        self.forget()

    def forget(self) -> None:
        """No threads yet (and, in a forked child, none of the parent's, which are gone)."""
        self.threads: frozenset[threading.Thread] = frozenset()
        self.jobs: queue.SimpleQueue[tuple[Callable[[str], Any], str, Future[Any]]] = \
            queue.SimpleQueue()
        self.lock = threading.Lock()

    def submit(self, fn: Callable[[str], Any], sql: str) -> Future[Any]:
        if not self.threads:
            self._start()
        done: Future[Any] = Future()
        self.jobs.put((fn, sql, done))
        return done

    def _start(self) -> None:
        with self.lock:
            if self.threads:
                return
            # threading.stack_size is process-wide: it applies to threads started
            # while it is set, so it is set only around these.
            before = threading.stack_size(self.stack_bytes)
            try:
                threads = [threading.Thread(target=self._run, name=f"parser-{i}", daemon=True)
                           for i in range(self.count)]
                for t in threads:
                    t.start()
            finally:
                threading.stack_size(before)
            self.threads = frozenset(threads)

    def _run(self) -> None:
        while True:
            fn, sql, done = self.jobs.get()
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(fn(sql))
            except BaseException as exc:  # the caller's to raise, whatever it is
                done.set_exception(exc)


_PARSER = _Parsers(PARSER_THREADS, PARSER_STACK_BYTES)
os.register_at_fork(after_in_child=_PARSER.forget)


def is_script(statements: Sequence[ParsedStatement]) -> bool:
    """BEGIN …; COMMIT/ROLLBACK: the one form several statements may take in one call."""
    k = enums.TransactionStmtKind
    first, last = statements[0].node, statements[-1].node
    return (
        isinstance(first, ast.TransactionStmt)
        and first.kind in (k.TRANS_STMT_BEGIN, k.TRANS_STMT_START)
        and isinstance(last, ast.TransactionStmt)
        and last.kind in (k.TRANS_STMT_COMMIT, k.TRANS_STMT_ROLLBACK)
    )


_TRANSACTION_TAGS = {"TRANS_STMT_BEGIN": "BEGIN", "TRANS_STMT_START": "BEGIN",
                     "TRANS_STMT_COMMIT": "COMMIT", "TRANS_STMT_ROLLBACK": "ROLLBACK",
                     "TRANS_STMT_SAVEPOINT": "SAVEPOINT", "TRANS_STMT_RELEASE": "RELEASE",
                     "TRANS_STMT_ROLLBACK_TO": "ROLLBACK"}


def command_kind(node: Any) -> str:
    """The statement's kind as its command tag names it: ``BEGIN``, ``COMMIT``, ``SET``,
    ``SHOW``, ``SELECT``, … (a bounded set: a metric's label)."""
    if isinstance(node, ast.TransactionStmt):
        return _TRANSACTION_TAGS.get(getattr(node.kind, "name", ""), "TRANSACTION")
    if isinstance(node, ast.VariableSetStmt):
        return "RESET" if node.kind is not None and node.kind.name.startswith("VAR_RESET") \
            else "SET"
    if isinstance(node, ast.VariableShowStmt):
        return "SHOW"
    return statement_name(node)
