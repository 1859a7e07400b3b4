"""A plain asyncio TCP byte relay: the floor of any Python proxy in front of Postgres.

It understands nothing: every byte a client sends goes to Postgres and back,
over asyncio protocols (no streams), on uvloop like the server. Backpressure:
a side whose peer's write buffer is full stops reading until it drains.

    python -m benchmarks.relay --upstream /path/to/.s.PGSQL.5432   (or HOST:PORT)

prints ``relay listening on 127.0.0.1:PORT`` once it accepts connections, and
runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys


class _Side(asyncio.Protocol):
    """One end of a relayed connection; ``peer`` is the other end."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.early: list[bytes] = []  # bytes received before the peer was connected

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is not None and peer.transport is not None:
            peer.transport.write(data)
        else:
            self.early.append(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()


class _Client(_Side):
    """The client's end: opens the upstream connection when the client connects."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.pause_reading()  # type: ignore[attr-defined]
        asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            if self.upstream.startswith("/"):
                _, up = await loop.create_unix_connection(_Side, self.upstream)
            else:
                host, _, port = self.upstream.rpartition(":")
                _, up = await loop.create_connection(_Side, host, int(port))
        except OSError:
            assert self.transport is not None
            self.transport.close()
            return
        up.peer, self.peer = self, up
        for data in self.early:
            up.transport.write(data)  # type: ignore[union-attr]
        self.early.clear()
        assert self.transport is not None
        if self.transport.is_closing():
            up.transport.close()  # type: ignore[union-attr]
        else:
            self.transport.resume_reading()


async def serve(upstream: str, host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Client(upstream), host, port, backlog=2048)
    print(f"relay listening on {host}:{server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.relay", description=__doc__)
    p.add_argument(
        "--upstream", required=True, help="a Unix socket path (/dir/.s.PGSQL.5432) or HOST:PORT"
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args.upstream, args.host, args.port))
    else:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serve(args.upstream, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
