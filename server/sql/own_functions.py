"""The server's own functions that the sidecar runs as any other. No I/O.

Rules:
- ``SIDECAR_FUNCTIONS`` (``scratchpad.search``) are real functions of the
  sidecar, in the server's system schema, that read what the server built there
  and call no tool (``catalog/_search.py``): the gate allows them wherever a
  function may be, unlike ``restage`` and ``refresh``, which are statements of
  their own (``allowlist.SYSTEM_FUNCTIONS``).
- ``information_schema``'s helpers are allowed the same way.
"""

from __future__ import annotations

from glove_scratchpad.names import SYSTEM_SCHEMA

from .allowlist import INFO_SCHEMA_FUNCTIONS

__all__ = ["SIDECAR_FUNCTIONS", "own_function"]

SIDECAR_FUNCTIONS = frozenset({"search"})


def own_function(schema: str | None, name: str, system: str = SYSTEM_SCHEMA) -> bool:
    """An ``information_schema`` helper, or one of ``SIDECAR_FUNCTIONS`` in the server's
    system schema ``system``: allowed as they are."""
    return (schema == "information_schema" and name in INFO_SCHEMA_FUNCTIONS) or (
        schema == system and name in SIDECAR_FUNCTIONS)
