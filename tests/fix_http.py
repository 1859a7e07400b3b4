"""An ASGI app of the tests' own (FastAPI) served by uvicorn on a free port, in the
test's event loop: ``async with http_served(app) as url``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn


@asynccontextmanager
async def http_served(app: Any, host: str = "127.0.0.1", lifespan: str = "off"
                      ) -> AsyncIterator[str]:
    """The URL a client on this machine reaches ``app`` at (bound to every address:
    through 127.0.0.1)."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning",
                                           lifespan=lifespan))
    task = asyncio.ensure_future(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{port}"
    finally:
        server.should_exit = True
        await task
