"""The resource: one capability of an agent, served as one table.

A resource has columns, a volatility, required keys (the tool's required
arguments), an optional primary key, and any subset of the four verbs. It is
checked when it is defined: a definition that could not be served is a
``ResourceDefinitionError`` at import time, never a surprise at query time. The
rows its resolvers return are checked by ``_rows.RowValidator``.

This module knows nothing of SQL text, sidecars or sockets.
"""

from __future__ import annotations

import datetime as dt
import decimal
import inspect
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel

from ._bindings import Bindings
from ._call import is_async, takes_context
from ._columns import Column, columns_from_model
from ._rows import RowValidator

__all__ = [
    "IDENTIFIER",
    "MAX_RETRIES",
    "PG_TO_PY",
    "RESERVED_PREFIXES",
    "SYSTEM_COLUMNS",
    "VERBS",
    "Bindings",
    "Rate",
    "Resource",
    "ResourceDefinitionError",
    "Volatility",
    "call_resolver",
    "define_resource",
]

Volatility = Literal["immutable", "stable", "volatile"]
Rate = tuple[int, float]  # (calls, seconds): at most that many calls per that many seconds
VOLATILITIES: tuple[str, ...] = get_args(Volatility)
VERBS = ("select", "insert", "update", "delete")

# Postgres folds unquoted names to lower case and truncates at 63 bytes
# (NAMEDATALEN - 1), so a name outside this pattern could not be written
# unquoted by a model, or would silently become another name.
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Prefixes the server keeps for itself: Postgres' own catalogs, and the
# per-statement relations the interpreter writes into rewritten SQL.
RESERVED_PREFIXES = ("pg_", "_gs_")
# Postgres' system columns: a table cannot have a column of these names.
SYSTEM_COLUMNS = frozenset({"tableoid", "xmin", "cmin", "xmax", "cmax", "ctid", "oid"})
# Retries a read may ask for: with the backoff doubling, more would outlast any timeout.
MAX_RETRIES = 10

# The Python type of a column's values, by its Postgres type (others: Any).
PG_TO_PY: dict[str, Any] = {
    "boolean": bool,
    "bigint": int,
    "integer": int,
    "smallint": int,
    "double precision": float,
    "real": float,
    "text": str,
    "numeric": decimal.Decimal,
    "date": dt.date,
    "timestamp with time zone": dt.datetime,
    "timestamptz": dt.datetime,
    "uuid": uuid.UUID,
}


class ResourceDefinitionError(ValueError):
    """A resource definition that cannot be served."""


Resolver = Callable[..., Any | Awaitable[Any]]


async def call_resolver(fn: Resolver, /, *args: Any, **kwargs: Any) -> Any:
    """Call a plain or async resolver and return its result."""
    result = fn(*args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


@dataclass(frozen=True, eq=False)
class Resource:
    """A capability served as a table. Build one with ``define_resource``."""

    name: str
    columns: tuple[Column, ...]
    volatility: Volatility
    keys: tuple[str, ...] = ()
    primary_key: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()  # optional columns whose conditions reach the resolver
    description: str = ""
    schema: type[BaseModel] | None = None
    select: Resolver | None = None
    insert: Resolver | None = None
    update: Resolver | None = None
    delete: Resolver | None = None
    inline: bool = False  # plain resolvers run on the event loop: pure and fast ones only
    retries: int = 0  # reads: attempts after the first, on TransientError or a timeout
    rate: Rate | None = None  # (calls, seconds), shared by every session of the server
    ttl: float | None = None  # seconds a call's rows stay fresh across statements and sessions
    # Seconds at most a session's fired write is laid over its reads (None: the server's).
    read_your_writes_s: float | None = None
    # Its resolvers keep their data in this process's memory: several worker processes
    # would each keep their own copy (``--workers`` refuses to serve it).
    stateful: bool = False
    # What a call of a verb would do, in lines EXPLAIN shows (the requests it would
    # make); given the call's Bindings, or None when its values are not known yet.
    explain: Callable[..., list[str]] | None = None
    # Whose credentials a user's reads are made with (``credential_of``); None: a select
    # resolver with ``ctx`` can see the user, so each user's calls are their own.
    credential: Callable[[str], str | None] | None = None
    # Words it is found by besides its name and description (scratchpad.search): an HTTP
    # table's operations, their summaries and tags.
    about: tuple[str, ...] = ()
    approval: bool = False  # every write needs a person's approval (docs/approvals.md)
    untrusted: bool = False  # its rows come from outside: reading it taints the session
    # The group it is listed under when there are many (an MCP server's namespace); empty:
    # the catalog's own rule (the name up to its first underscore).
    group: str = ""
    # The description without what its maker appended to it (an MCP tool's origin, how
    # an INSERT calls it): what a one-line description is cut from. None: the description.
    brief: str | None = None
    _by_name: dict[str, Column] = field(init=False, repr=False)
    _names: tuple[str, ...] = field(init=False, repr=False)
    _rows: RowValidator = field(init=False, repr=False)
    _with_ctx: frozenset[str] = field(init=False, repr=False)
    _on_loop: frozenset[str] = field(init=False, repr=False)
    _credential: Callable[[str], str | None] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})
        object.__setattr__(self, "_names", tuple(c.name for c in self.columns))
        object.__setattr__(self, "_rows", RowValidator(self.name, self.columns, self.schema))
        fns = {v: getattr(self, v) for v in VERBS if getattr(self, v) is not None}
        object.__setattr__(self, "_with_ctx", frozenset(
            v for v, fn in fns.items() if takes_context(fn)))
        object.__setattr__(self, "_on_loop", frozenset(
            v for v, fn in fns.items() if self.inline or is_async(fn)))
        object.__setattr__(self, "_credential", self.credential or (
            _own if "select" in self._with_ctx else None))

    @property
    def verbs(self) -> tuple[str, ...]:
        """The verbs this resource has, in SELECT/INSERT/UPDATE/DELETE order."""
        return tuple(v for v in VERBS if getattr(self, v) is not None)

    @property
    def column_names(self) -> tuple[str, ...]:
        return self._names

    def column(self, name: str) -> Column | None:
        return self._by_name.get(name)

    def resolver(self, verb: str) -> Resolver | None:
        return getattr(self, verb) if verb in VERBS else None

    def takes_context(self, verb: str) -> bool:
        """Whether the verb's resolver declares a ``ctx`` parameter (a ``CallContext``)."""
        return verb in self._with_ctx

    def credential_of(self, user: str) -> str | None:
        """Whose credentials ``user``'s reads are made with: part of a call's identity, so
        that a lasting call made with one role's credentials is never read by another.
        None: every user's call is the same (a resolver that cannot see the user, or a
        tool whose credentials are not per role), and lasting calls are shared by all."""
        found = self._credential
        return None if found is None else found(user)

    def on_loop(self, verb: str) -> bool:
        """Whether the verb's resolver runs on the event loop (async, or ``inline``);
        otherwise it runs in a worker thread."""
        return verb in self._on_loop

    # -- rows -------------------------------------------------------------

    def validate_rows(
        self, rows: Any, stamp: Mapping[str, Any] | None = None, *, snapshot: bool = True
    ) -> list[dict[str, Any]]:
        """Rows a resolver returned, checked against the schema, as dicts by column name
        (``RowValidator.validate``: ``stamp`` fills required keys a resolver left out;
        with ``snapshot``, never the resolver's own dicts)."""
        return self._rows.validate(rows, stamp, snapshot=snapshot)

    def validate_insert_rows(self, rows: list[dict[str, Any]]) -> list[Any]:
        """Rows an INSERT computed, as schema instances (or dicts without a schema)."""
        return self._rows.validate_insert(rows)


def _own(user: str) -> str:
    """A resolver that sees the user: each user's calls are their own."""
    return user


def _as_column(spec: Column | Mapping[str, Any] | tuple[str, str]) -> Column:
    if isinstance(spec, Column):
        return spec
    if isinstance(spec, tuple):
        name, pg_type = spec
        return Column(name=name, pg_type=pg_type, py_type=PG_TO_PY.get(pg_type, Any))
    pg_type = spec.get("type") or spec.get("pg_type") or "text"
    return Column(
        name=spec["name"],
        pg_type=pg_type,
        description=spec.get("description", ""),
        py_type=spec.get("py_type", PG_TO_PY.get(pg_type, Any)),
        nullable=bool(spec.get("nullable", True)),
    )


def _check_identifier(what: str, name: str) -> None:
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ResourceDefinitionError(
            f"{what} {name!r} is not a lower-case SQL identifier (letters, digits and _,"
            " at most 63 characters, not starting with a digit); a model writes names"
            " unquoted, so give it one that needs no quotes (for a pydantic field,"
            " Field(alias='snake_case_name'))"
        )


def define_resource(
    name: str,
    *,
    schema: type[BaseModel] | None = None,
    columns: Sequence[Column | Mapping[str, Any] | tuple[str, str]] | None = None,
    keys: Sequence[str] = (),
    primary_key: Sequence[str] = (),
    filters: Sequence[str] = (),
    volatility: Volatility,
    description: str = "",
    select: Resolver | None = None,
    insert: Resolver | None = None,
    update: Resolver | None = None,
    delete: Resolver | None = None,
    inline: bool = False,
    retries: int = 0,
    rate: Rate | Sequence[float] | None = None,
    ttl: float | None = None,
    read_your_writes_s: float | None = None,
    stateful: bool = False,
    explain: Callable[..., list[str]] | None = None,
    credential: Callable[[str], str | None] | None = None,
    about: Sequence[str] = (),
    approval: bool = False,
    untrusted: bool = False,
    group: str = "",
    brief: str | None = None,
) -> Resource:
    """Define a resource; every mistake that would make it unservable is raised here.

    ``inline=True`` keeps plain resolvers on the event loop (for pure, fast ones over
    in-memory data); otherwise they run in worker threads. ``retries=N`` makes a read
    again, up to N times with exponential backoff and jitter, when its resolver raises
    ``TransientError`` or times out. ``rate=(calls, seconds)`` is a token bucket
    shared by every session of the server: calls over it wait, within the
    statement's timeout. ``ttl=seconds`` keeps a call's rows fresh for that long across
    statements and sessions (materialized in the sidecar); without it, ``stable``
    rows last one request and ``immutable`` ones the server's life.
    ``read_your_writes_s=seconds`` bounds how long a session's fired write is laid over
    its own reads of this table while the tool's rows do not show it yet (an eventually
    consistent API); ``0`` shows the tool's rows as they are; None takes the server's.
    ``stateful=True`` says that its resolvers keep their data in this process's memory (a
    list, a dict): ``--workers N`` would give each worker a copy of its own, so a
    server of several workers refuses to serve it. ``explain(verb, bindings)`` gives
    the lines EXPLAIN shows of a call (the requests it would make); it must call nothing.
    One that takes a third argument is given a write's values where the statement fixes
    them: an INSERT's row, an UPDATE's changes.
    ``credential(user)`` names whose credentials a user's reads are made with (a role's
    name, never a secret; None: the same for every user): lasting calls are kept per
    credential. Without it, a select resolver with a ``ctx`` parameter keeps each
    user's calls apart, and one without shares them between users.
    ``about``: what else a search finds it by (``scratchpad.search``), as text.
    ``approval=True``: its writes need a person's approval; ``untrusted=True``: its rows
    come from outside, so a session that read it needs approval to write (docs/approvals.md).
    ``group``: the group it is listed under when there are many; ``brief``: its
    description without the sentences its maker appended, for a one-line description.
    """
    _check_identifier("resource name", name)
    if name.startswith(RESERVED_PREFIXES):
        raise ResourceDefinitionError(
            f"resource name {name!r} starts with a reserved prefix {RESERVED_PREFIXES}"
        )
    if volatility not in VOLATILITIES:
        raise ResourceDefinitionError(
            f"resource {name!r}: unknown volatility {volatility!r}; use one of "
            + ", ".join(VOLATILITIES)
        )
    if schema is not None and columns is not None:
        raise ResourceDefinitionError(f"resource {name!r}: give schema or columns, not both")
    if schema is not None:
        cols = columns_from_model(schema)
    else:
        cols = tuple(_as_column(c) for c in columns or ())
    if not cols:
        raise ResourceDefinitionError(
            f"resource {name!r} has no columns: give schema=<pydantic model> or columns=[...]"
        )
    seen: set[str] = set()
    for col in cols:
        _check_identifier(f"resource {name!r}: column name", col.name)
        if col.name in SYSTEM_COLUMNS:
            raise ResourceDefinitionError(
                f"resource {name!r}: column name {col.name!r} is a Postgres system column"
                f" name; call it {col.name + '_'!r} (for a pydantic field,"
                f" Field(alias={col.name + '_'!r}))"
            )
        if col.name in seen:
            raise ResourceDefinitionError(f"resource {name!r}: column {col.name!r} appears twice")
        seen.add(col.name)
    for label, names in (("key", keys), ("primary key column", primary_key),
                         ("filter", filters)):
        if isinstance(names, str):
            # A bare string would be read letter by letter ("id" -> "i", "d").
            raise ResourceDefinitionError(
                f"resource {name!r}: {label}s must be a list of column names, not the"
                f" string {names!r}; write [{names!r}]"
            )
        for key in names:
            if key not in seen:
                raise ResourceDefinitionError(
                    f"resource {name!r}: {label} {key!r} is not a column; columns are "
                    + ", ".join(c.name for c in cols)
                )
    verbs = {"select": select, "insert": insert, "update": update, "delete": delete}
    for verb, fn in verbs.items():
        if fn is not None and not callable(fn):
            raise ResourceDefinitionError(f"resource {name!r}: {verb} must be callable")
    if not any(verbs.values()):
        raise ResourceDefinitionError(
            f"resource {name!r} has no verb: give at least one of select, insert, update, delete"
        )
    _check_reliability(name, retries, rate)
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float)
                            or not ttl > 0 or volatility == "volatile"):
        raise ResourceDefinitionError(
            f"resource {name!r}: ttl is a number of seconds above 0, for a stable or "
            f"immutable resource (volatile rows are never kept), not {ttl!r}")
    if read_your_writes_s is not None and (
            isinstance(read_your_writes_s, bool)
            or not isinstance(read_your_writes_s, int | float) or read_your_writes_s < 0):
        raise ResourceDefinitionError(
            f"resource {name!r}: read_your_writes_s is a number of seconds, 0 or more "
            f"(0: a session's reads show the tool's rows as they are), not "
            f"{read_your_writes_s!r}")
    # A required key is the tool's argument: it can never be NULL.
    key_set = set(keys)
    cols = tuple(
        Column(c.name, c.pg_type, c.description, c.py_type, nullable=False, adapter=c.adapter)
        if c.name in key_set
        else c
        for c in cols
    )
    return Resource(
        name=name,
        columns=cols,
        volatility=volatility,
        keys=tuple(keys),
        primary_key=tuple(primary_key),
        filters=tuple(f for f in filters if f not in key_set),
        description=description,
        schema=schema,
        **verbs,
        inline=bool(inline),
        retries=retries,
        rate=None if rate is None else (int(rate[0]), float(rate[1])),
        ttl=None if ttl is None else float(ttl),
        read_your_writes_s=None if read_your_writes_s is None else float(read_your_writes_s),
        stateful=bool(stateful),
        explain=explain,
        credential=credential,
        about=tuple(str(a) for a in about), approval=bool(approval), untrusted=bool(untrusted),
        group=str(group), brief=None if brief is None else str(brief),
    )


def _check_reliability(name: str, retries: Any, rate: Any) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or not (
            0 <= retries <= MAX_RETRIES):
        raise ResourceDefinitionError(
            f"resource {name!r}: retries must be a whole number from 0 to {MAX_RETRIES},"
            f" not {retries!r}")
    if rate is None:
        return
    try:
        calls, seconds = rate
        ok = (not isinstance(calls, bool) and float(calls).is_integer() and calls >= 1
              and float(seconds) > 0)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ResourceDefinitionError(
            f"resource {name!r}: rate must be (calls, seconds), at least one call per a"
            f" positive number of seconds, e.g. rate=(10, 1); not {rate!r}")
