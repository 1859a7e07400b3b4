"""What every client of the matrix must see, and how a blocking driver runs in a test.

The ``server`` fixture serves on the pytest-asyncio session loop, which only runs
while a test awaits. A synchronous driver called straight from a test would block
that loop and wait forever for a server that cannot answer, so every blocking
driver call goes through ``in_thread`` from an ``async def`` test.

The expectations are exact. The tables the server serves are computed from the
resource lists rather than spelled out, so that a new resource in the demo set or
in ``tests/net/fix_wire.py`` does not break every client at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from glove_scratchpad.resources.demo import demo_resources

from ..net.fix_wire import wire_resources

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking driver code off the event loop, so the server keeps serving."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def handler_of(server: Any, backend_pid: int) -> Any:
    """The server's ClientHandler for a connection, found by its BackendKeyData pid."""
    [handler] = [h for (pid, _), h in server.state.connections.items() if pid == backend_pid]
    return handler


# -- discovery ---------------------------------------------------------------------

TABLES_SQL = ("SELECT table_name FROM information_schema.tables "
              "WHERE table_schema = 'glove' ORDER BY table_name")
TABLES = sorted(r.name for r in demo_resources() + wire_resources())

TASK_COLUMNS_SQL = ("SELECT column_name, data_type, is_nullable "
                    "FROM information_schema.columns "
                    "WHERE table_schema = 'glove' AND table_name = 'tasks' "
                    "ORDER BY ordinal_position")
TASK_COLUMNS = [("id", "bigint", "NO"), ("title", "text", "NO"),
                ("due", "date", "YES"), ("status", "text", "YES")]
TASK_COMMENTS = {"id": "Task id, assigned on INSERT", "title": "What to do",
                 "due": "Due date", "status": "Progress (one of: todo, done)"}
TASKS_COMMENT = "The user's task list. Verbs: select, insert, update, delete. Volatility: volatile."

# -- reads -------------------------------------------------------------------------

WEB_SQL = "SELECT title, rank FROM web WHERE query = 'postgresql' ORDER BY rank"
WEB_ROWS = [("PostgreSQL: The World's Most Advanced Open Source Relational Database", 1),
            ("PostgreSQL Frontend/Backend Protocol", 2)]

ITEM_7 = (7, "item 7", 10.5)  # SELECT id, name, price FROM items WHERE id = 7

JOIN_SQL = ("SELECT items.id, items.name, tasks.title, tasks.status "
            "FROM items JOIN tasks ON tasks.id = items.id ORDER BY items.id")
JOIN_ROWS = [(1, "item 1", "Write the quarterly report", "todo"),
             (2, "item 2", "Book the team offsite", "todo"),
             (3, "item 3", "Renew the TLS certificate", "done")]
TASK_ROWS = [(1, "Write the quarterly report", "todo"), (2, "Book the team offsite", "todo"),
             (3, "Renew the TLS certificate", "done")]

# -- the staged write ----------------------------------------------------------------

STAGED_SQL = "SELECT id, resource, verb, calls, status FROM scratchpad.staged ORDER BY id"


def staged_rows(n: int) -> list[tuple[Any, ...]]:
    """scratchpad.staged after n one-row INSERTs into emails, in a new session."""
    return [(i, "emails", "insert", "emails.insert(1 row)", "staged") for i in range(1, n + 1)]


def staged_notice(i: int) -> str:
    return f"staged #{i}: emails.insert(1 row) will be called at COMMIT"


def fired_notice(i: int) -> str:
    return f"fired #{i}: emails.insert(1 row)"


STAGED_HINT = ("SELECT * FROM scratchpad.staged shows what is staged; ROLLBACK discards it. "
               "Reads in this transaction see it; values the tool assigns (ids) are known "
               "after COMMIT.")

# -- the error -----------------------------------------------------------------------

MISSING_KEY_SQL = "SELECT * FROM web"
MISSING_KEY_STATE = "22023"
MISSING_KEY_MESSAGE = ('resource "web" needs a value for its required key "query" '
                       "(Search terms (required): words to look for)")
MISSING_KEY_HINT = "Add it to the WHERE clause, e.g. SELECT * FROM web WHERE query = '…'"
ABORTED_STATE = "25P02"  # a statement in a transaction after its error
