"""Fixtures of the client matrix: the session's wire server, as each driver names it."""

from __future__ import annotations

from typing import Any

import pytest

from .fix_paged import paged, paged_server  # noqa: F401  (fixtures)


@pytest.fixture
def address(server: Any) -> dict[str, Any]:
    """Connection keywords for drivers that take no DSN (pg8000)."""
    return {"host": "127.0.0.1", "port": server.port, "user": "agent", "database": "scratchpad"}
