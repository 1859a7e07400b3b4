"""The interpreter (gate, plan, resolve, stage) and the wire server.

``Database`` serves resources over a sidecar; its ``Session`` has
``execute``, ``explain`` and ``preview``, which the wire, the Python API and the
agent tool all call.
"""

from .engine.database import Database
from .engine.result import Call, Notice, Result, ResultColumn, StagedWrite, Touched
from .engine.session import Session

__all__ = ["Call", "Database", "Notice", "Result", "ResultColumn", "Session", "StagedWrite",
           "Touched"]
