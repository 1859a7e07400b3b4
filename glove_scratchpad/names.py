"""What a server is called in its sidecar: the schemas and the role derived from its name,
and how a name is written in SQL. Pure: the catalog and the SQL layer both read it.

A server has a name (``--name``, default ``glove``). Everything it creates in a
sidecar database lives in schemas derived from that name, so servers with
different names share one database without touching each other's objects, and
servers with the same name share theirs (``_claim``).

Rules:
- ``schema_names(name)`` is the one place where the names are derived; the
  journal, the audit and the views ask it, never spell a schema themselves.
- The default server keeps the short names clients know, except ``public``,
  which belongs to the database's owner: its resources are in ``glove``, its
  views in ``scratchpad``, its functions in ``fn`` and its audit and journal in
  ``_gs_audit``. A server named N uses ``N``, ``N_scratchpad``, ``N_fn`` and
  ``_gs_audit_N``.
- A name is a lower-case identifier that cannot collide with another name's
  schemas, nor with ``public``, ``pg_*`` or ``information_schema``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["DEFAULT_NAME", "DEFAULT_SCHEMAS", "FN_SCHEMA", "INSERT_SCHEMA", "SERVED_SCHEMA",
           "SYSTEM_SCHEMA", "Schemas", "agent_role", "check_name", "qualified", "quote_ident",
           "quote_literal", "schema_names"]

DEFAULT_NAME = "glove"
NAME_MAX = 30  # so that every derived schema and role name fits in Postgres' 63 bytes
_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Names that would be, or would derive, another server's schema or one of Postgres' own.
_RESERVED = frozenset({"public", "scratchpad", "fn", "information_schema"})
_SUFFIXES = ("_scratchpad", "_fn")


def quote_ident(name: str) -> str:
    """Always quoted, so reserved words (``user``, ``time``) work as names."""
    return '"' + name.replace('"', '""') + '"'


# What no Postgres text can hold (NUL), and what UTF-8 cannot encode (lone surrogates).
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")


def quote_literal(text: str) -> str:
    """``text`` as a string constant that means the same under every session setting:
    an escape string (``E'…'``), whose backslashes are always escapes, so
    ``standard_conforming_strings = off`` cannot turn a backslash into a quote's end.
    NUL and lone surrogates, which Postgres refuses, are left out."""
    text = _UNSENDABLE.sub("", text)
    return "E'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class Schemas:
    """The schemas one server name owns in a sidecar database."""

    name: str
    served: str  # the resources' shell tables; first on the search_path
    system: str  # the views (staged writes, resources, calls, journal)
    fns: str  # the served functions' shells
    private: str  # the audit, the journal and the registry: never the agent's

    @property
    def owned(self) -> tuple[str, ...]:
        """The schemas the agent role may use (the private one it may not)."""
        return (self.served, self.system, self.fns)


def check_name(name: str) -> str:
    """``name`` if a server may be called that, else ValueError saying why."""
    if not _NAME.fullmatch(name) or len(name) > NAME_MAX:
        raise ValueError(f"a server name is a lower-case identifier of at most {NAME_MAX} "
                         f"characters (letters, digits, _), not {name!r}")
    if name in _RESERVED or name.startswith("pg_") or name.endswith(_SUFFIXES):
        raise ValueError(f"the server name {name!r} would collide with a schema of Postgres "
                         "or of another server name; choose another --name")
    return name


def schema_names(name: str = DEFAULT_NAME) -> Schemas:
    """The schemas of the server called ``name``."""
    check_name(name)
    if name == DEFAULT_NAME:
        return Schemas(name, name, "scratchpad", "fn", "_gs_audit")
    return Schemas(name, name, f"{name}_scratchpad", f"{name}_fn", f"_gs_audit_{name}")


DEFAULT_SCHEMAS = schema_names()


def agent_role(name: str, database: str) -> str:
    """The least-privilege role statements of server ``name`` run as in ``database``.

    Roles are the cluster's, not the database's, and each keeps a password in its
    own database: so one role per (name, database).
    """
    role = f"{name}_agent_{database}"
    if len(role.encode()) > 63:
        digest = hashlib.sha1(role.encode()).hexdigest()[:10]
        role = f"{name}_agent_{digest}"
    return role


SERVED_SCHEMA = DEFAULT_SCHEMAS.served
SYSTEM_SCHEMA = DEFAULT_SCHEMAS.system
FN_SCHEMA = DEFAULT_SCHEMAS.fns
# An INSERT computes its rows against an unconstrained temporary twin of the
# shell table, made inside the statement's always rolled-back transaction: ids
# and other values a tool assigns are NULL until the tool runs, so the shell
# table's NOT NULL and PRIMARY KEY must not apply there.
INSERT_SCHEMA = "pg_temp"


def qualified(name: str, schema: str = SERVED_SCHEMA) -> str:
    return f"{quote_ident(schema)}.{quote_ident(name)}"
