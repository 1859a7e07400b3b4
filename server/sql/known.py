"""What a statement may name, as data: the record the engine hands the gate and the
planner. Pure.

The gate asks whether a name is a resource, a served function or one of the session's
temporary tables; the planner asks what resource a name means. Both read this record,
made by the engine, instead of calling back into it.

Rules:
- ``resources``: the view's resources by name, named unqualified or in the served
  schema; ``system``: the system views, named in the system schema; ``catalog``: the
  ``pg_catalog`` relations the engine answers itself (``pg_cursors``), named unqualified
  or in ``pg_catalog``, ahead of the others.
- A view's record is made once and kept (resources never change while they are
  served); a session with temporary tables gets a copy naming them (``with_temps``).
- Temporary tables are named unqualified only, and are never resources: the planner
  leaves them to the sidecar.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Container, Mapping
from dataclasses import dataclass
from typing import Any

from glove_scratchpad.names import Schemas

__all__ = ["Known"]


@dataclass(frozen=True, slots=True)
class Known:
    """The names one statement may use, and what they mean."""

    schemas: Schemas
    resources: Mapping[str, Any]  # the view's resources, by name
    system: Mapping[str, Any]  # the system views, by name
    catalog: Mapping[str, Any]  # pg_catalog relations answered by the engine, by name
    functions: Container[str]  # the served functions' names (fn.<name>)
    temps: frozenset[str] = frozenset()  # the session's temporary tables

    def resource(self, schema: str | None, name: str) -> Any:
        """The resource a (schema, name) means, or None."""
        if schema in (None, "pg_catalog") and name in self.catalog:
            return self.catalog[name]
        if schema == self.schemas.system:
            return self.system.get(name)
        if schema in (None, self.schemas.served):
            return self.resources.get(name)
        return None

    def is_resource(self, schema: str | None, name: str) -> bool:
        """Whether a (schema, name) is a resource (temporary tables aside)."""
        return self.resource(schema, name) is not None

    def is_function(self, schema: str, name: str) -> bool:
        """Whether ``fn.<name>`` is a served function."""
        return schema == self.schemas.fns and name in self.functions

    def is_temp(self, name: str) -> bool:
        """Whether an unqualified name is one of the session's temporary tables."""
        return name in self.temps

    def with_temps(self, temps: Collection[str]) -> Known:
        """This record for a session whose temporary tables are ``temps``."""
        if not temps and not self.temps:
            return self
        return dataclasses.replace(self, temps=frozenset(temps))
