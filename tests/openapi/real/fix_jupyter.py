"""jupyter_server (PyPI), a real Swagger 2.0 API with token auth, started by the tests on
loopback behind the counting proxy (``tests/fix_upstream.py``), and glove-scratchpad
tables made from the document it serves itself (``/api/spec.yaml``, which needs the
token like every other page but ``/api/``).

``jupyter()`` starts one server with a root folder of its own in a temporary folder,
holding ``a.txt`` and ``docs/b.txt``, and a kernel spec ``idle`` (a process that only
sleeps: sessions and kernels can be made without ipykernel). ``tables_of(api, sidecar,
**entry)`` serves its tables (namespace ``j``) on a wire server.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.net.server import Server

from ...fix_server import serving
from ...fix_upstream import Upstream, upstream

TOKEN = "jupyter-test-token-0c41"
_names = itertools.count()


@dataclass
class Jupyter:
    api: Upstream
    root: Path  # the server's root folder: what its contents API reads and writes

    @property
    def spec(self) -> str:
        return f"{self.api.url}/api/spec.yaml"


@asynccontextmanager
async def jupyter() -> AsyncIterator[Jupyter]:
    with tempfile.TemporaryDirectory(prefix="jupyter-") as home:
        root = Path(home, "root")
        (root / "docs").mkdir(parents=True)
        (root / "a.txt").write_text("hello\n")
        (root / "docs" / "b.txt").write_text("bee\n")
        spec = Path(home, "data", "kernels", "idle")
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-c", "import time; time.sleep(600)"],
            "display_name": "Idle", "language": "none"}))
        env = {"JUPYTER_RUNTIME_DIR": f"{home}/runtime", "JUPYTER_DATA_DIR": f"{home}/data",
               "JUPYTER_CONFIG_DIR": f"{home}/config", "JUPYTER_PATH": f"{home}/data",
               "JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_TOKEN": ""}
        command = [sys.executable, "-m", "jupyter_server", "--port={port}",
                   "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root}",
                   f"--IdentityProvider.token={TOKEN}", "--ServerApp.open_browser=False",
                   "--allow-root", "--MappingKernelManager.default_kernel_name=idle",
                   # A kernel that never answers its shutdown request is killed at once.
                   "--KernelManager.shutdown_wait_time=0.1"]
        async with upstream(command, ready="/api/", env=env, cwd=home) as api:
            yield Jupyter(api, root)


def entry(j: Jupyter, **config: Any) -> dict[str, Any]:
    """The ``[[openapi.apis]]`` entry of the server: its own document, the token."""
    return {"namespace": "j", "spec": j.spec,
            "headers": {"Authorization": f"token {TOKEN}"}, **config}


@dataclass
class Tables:
    db: Database
    server: Server
    bridge: OpenApiBridge

    async def connect(self) -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(
            f"postgresql://agent@127.0.0.1:{self.server.port}/scratchpad", autocommit=True)
        notices: list[tuple[str, str]] = []
        conn.add_notice_handler(lambda d: notices.append(
            (d.severity_nonlocalized or "", d.message_primary or "")))
        conn.notices = notices  # type: ignore[attr-defined]
        return conn


@asynccontextmanager
async def tables_of(config: dict[str, Any], sidecar: Any, *, writes: bool = True,
                    base: Path = Path(".")) -> AsyncIterator[Tables]:
    bridge = OpenApiBridge([config], base)
    try:
        resources = await bridge.load()
        db = await Database.create(resources, writes=writes, sidecar=sidecar,
                                   database=f"jupyter_{next(_names)}")
        try:
            async with serving(db, writes=writes) as server:
                yield Tables(db, server, bridge)
        finally:
            await db.close()
    finally:
        await bridge.aclose()
