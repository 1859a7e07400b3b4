"""The operator's web console (``--console-port``): approvals, live sessions and their
statements, recent tool calls and the resources, in a browser.

Rules:
- The console is a client of the server's own SQL: a person signs in with a role
  and its password (a ``[users.NAME]`` table), which open a wire connection to the
  server (asyncpg, over loopback); every page reads and every button acts through
  that connection (``reads``). What a role may see or do, the audit of it, and the
  refusals (42501) are the server's, the same as from psql, by construction.
- It listens on loopback unless ``--console-host`` says otherwise, and is served
  only by a one-process server with users (``check_console``).
- It is safe against what it shows (``app``): every value is escaped by the
  templates, nothing in the data is ever a link or a script, the
  Content-Security-Policy admits the console's own script file alone, the session
  cookie is HttpOnly and SameSite=Strict, and a state change without the form's
  CSRF token is refused.
"""

from __future__ import annotations

from .port import ConsolePort, check_console

__all__ = ["ConsolePort", "check_console"]
