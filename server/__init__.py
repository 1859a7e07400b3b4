"""The interpreter (gate, plan, resolve, stage) and the wire server.

``Database`` serves resources over a sidecar; its ``Session`` has
``execute``, ``explain`` and ``preview``, which the wire, the Python API and the
agent tool all call. The names are loaded on first use, so that the pure
``server.sql`` is imported without the engine, the catalog or a driver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine.database import Database
    from .engine.result import Call, Notice, Result, ResultColumn, StagedWrite, Touched
    from .engine.session import Session

__all__ = ["Call", "Database", "Notice", "Result", "ResultColumn", "Session", "StagedWrite",
           "Touched"]

_HOMES = {"Database": ".engine.database", "Session": ".engine.session"} | dict.fromkeys(
    ("Call", "Notice", "Result", "ResultColumn", "StagedWrite", "Touched"), ".engine.result")


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
