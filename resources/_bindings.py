"""What a resolver receives for one call: the values a statement bound its columns to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glove_scratchpad.errors import MissingRequiredKey

__all__ = ["Bindings"]


class Bindings:
    """What a statement gave one call of a resource: its arguments.

    ``one``/``all``/``has``/``get`` read the values a required key or a filter was
    bound to by ``=`` or ``IN`` (converted to the column's Python type): one per
    call for a key, the whole list for a filter's ``IN``. ``where(column)`` gives a
    declared filter's conditions as ``(op, value)`` pairs, with ``op`` one of
    ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``in`` (value: a list), ``like``,
    ``ilike``, ``is null``, ``is not null`` (value: None); ``BETWEEN`` arrives as
    ``>=`` and ``<=``. ``limit`` is the statement's LIMIT (plus OFFSET) when it
    applies to this resource alone, else None: use it only if every condition
    given is applied too. Postgres applies every predicate to the rows a
    resolver returns, so a resolver may use or ignore the filters.
    """

    __slots__ = ("_resource", "_values", "_where", "limit")

    def __init__(self, values: Mapping[str, Sequence[Any]], resource: str = "",
                 where: Mapping[str, Sequence[tuple[str, Any]]] | None = None,
                 limit: int | None = None) -> None:
        self._values = {k: tuple(v) for k, v in values.items()}
        self._where = {k: tuple(v) for k, v in (where or {}).items()}
        self._resource = resource
        self.limit = limit

    def one(self, column: str) -> Any:
        """The single value bound to ``column``; an error if it has none or several."""
        values = self._values.get(column, ())
        if len(values) != 1:
            where = f"WHERE {column} = …"
            raise MissingRequiredKey(
                f'resource "{self._resource}" needs exactly one value for column "{column}",'
                f" got {len(values)}",
                hint=f"Bind it with {where} (one value per call; IN (…) fans out to one call "
                "per value).",
            )
        return values[0]

    def all(self, column: str) -> list[Any]:
        """Every value bound to ``column`` (empty when it is unbound)."""
        return list(self._values.get(column, ()))

    def has(self, column: str) -> bool:
        """Whether the statement bound ``column`` by ``=`` or ``IN``."""
        return column in self._values

    def get(self, column: str, default: Any = None) -> Any:
        """The single bound value of ``column``, or ``default`` when it is unbound."""
        values = self._values.get(column, ())
        return values[0] if len(values) == 1 else default

    def where(self, column: str) -> list[tuple[str, Any]]:
        """A declared filter's conditions, ``[(op, value), …]`` (empty when it has none)."""
        return list(self._where.get(column, ()))

    def as_dict(self) -> dict[str, Any]:
        """Single values as scalars, several as lists."""
        return {k: v[0] if len(v) == 1 else list(v) for k, v in self._values.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bindings) and (self._values, self._where, self.limit) == (
            other._values, other._where, other.limit)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        where = f", where={self._where!r}" if self._where else ""
        limit = f", limit={self.limit}" if self.limit is not None else ""
        return f"Bindings({self.as_dict()!r}{where}{limit})"
