"""The console's HTTP port: uvicorn, in the server's own event loop, over the app.

Rules:
- Served by a one-process server that has users (``check_console``): signing in is
  a role's password, and with ``--workers`` the sessions, their statements and the
  cancels it shows would be one worker's among several.
- Its connections go to the server's own port over loopback (the listening address
  when the server listens on one address only).
- Closing it signs every session out (their connections are the server's clients)
  before the server shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from glove_scratchpad.names import schema_names

from ..config import ANY_ADDRESS
from .app import console_app
from .signin import Signins, Target

if TYPE_CHECKING:
    from ..config import ServerConfig

__all__ = ["ConsolePort", "check_console"]

START_TIMEOUT = 10.0  # seconds for uvicorn to start serving
STOP_GRACE = 2  # seconds a request in flight gets when the console closes


def check_console(config: ServerConfig) -> None:
    """ValueError (one line) when ``config`` cannot serve the console."""
    if not config.users:
        raise ValueError("the console signs in with a role's password: configure "
                         "[users.NAME] tables (glove-scratchpad passwd makes a password), "
                         "or start without --console-port")
    if config.workers > 1:
        raise ValueError(f"the console is served by a one-process server: with --workers "
                         f"{config.workers} each worker has its own sessions. Start it with "
                         "--workers 1, or without --console-port")


def _target(config: ServerConfig, port: int) -> Target:
    host = config.host
    if host in ANY_ADDRESS:
        host = "127.0.0.1"
    return Target(host, port, config.database, bool(config.tls_cert and config.tls_key))


class ConsolePort:
    """The web console of the server listening on ``server_port``."""

    def __init__(self, config: ServerConfig, server_port: int) -> None:
        check_console(config)
        self._config = config
        self.signins = Signins(_target(config, server_port))
        host = config.console_host
        self._app = console_app(self.signins, schema_names(config.name).system,
                                listen_host=None if host in ANY_ADDRESS else host)
        self._uv: Any = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None
        self.url = ""

    async def start(self) -> None:
        import uvicorn

        host = self._config.console_host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host or "0.0.0.0", self._config.console_port or 0),
                                          family=family)
        port = self._sock.getsockname()[1]
        shown = ("localhost" if host in ANY_ADDRESS
                 else f"[{host}]" if family == socket.AF_INET6 else host)
        self.url = f"http://{shown}:{port}/"
        self._uv = _quiet_server()(uvicorn.Config(
            self._app, log_config=None, access_log=False, lifespan="off",
            server_header=False, timeout_graceful_shutdown=STOP_GRACE))
        self._task = asyncio.create_task(self._uv.serve(sockets=[self._sock]))
        async with asyncio.timeout(START_TIMEOUT):
            while not self._uv.started:
                if self._task.done():
                    self._task.result()  # its error
                    raise RuntimeError("the console did not start")
                await asyncio.sleep(0.02)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1]) if self._sock is not None else 0

    async def close(self) -> None:
        await self.signins.close()
        if self._task is not None:
            self._uv.should_exit = True
            with contextlib.suppress(Exception):
                await self._task
            self._task = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _quiet_server() -> type:
    import uvicorn

    class Quiet(uvicorn.Server):
        """uvicorn without its signal handlers: the server's own stop the process."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Quiet
