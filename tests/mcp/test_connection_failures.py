"""Servers that are missing, crash, hang or go away: only their own tables fail."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp.types import Tool

from glove_scratchpad.catalog import Sidecar
from glove_scratchpad.errors import SqlError, TransactionResolutionUnknown
from glove_scratchpad.resources.mcp import (
    McpBridge,
    McpConnection,
    McpServerConfig,
    McpServerUnavailable,
    ToolOverride,
)
from glove_scratchpad.server import Database

from ..fix_server import free_port
from .conftest import node_server, python_server, start_everything_http, stop

# A time server that can be taken down: while the file $FLAKY_DOWN exists it
# refuses to start; it adds its pid to $FLAKY_PID, so a test can kill it.
FLAKY = """\
if [ -e "$FLAKY_DOWN" ]; then echo "flaky: down for maintenance" >&2; exit 1; fi
echo $$ >> "$FLAKY_PID"
exec "$@"
"""


class Flaky:
    def __init__(self, root: Path) -> None:
        self.down_file = root / "down"
        self.pid_file = root / "pid"
        self.script = root / "flaky.sh"
        self.script.write_text(FLAKY)

    def config(self) -> McpServerConfig:
        time = python_server("mcp_server_time", "--local-timezone", "UTC")
        return McpServerConfig(
            namespace="clock",
            command="sh",
            args=[str(self.script), str(time["command"]), *time["args"]],
            env={"FLAKY_DOWN": str(self.down_file), "FLAKY_PID": str(self.pid_file)},
            # An insert table on the same server, to see that writes are not retried.
            tools={"convert_time": ToolOverride(verb="insert", table="clock_conversions")},
        )

    @property
    def pids(self) -> list[int]:
        """The pid of every start, oldest first."""
        return [int(p) for p in self.pid_file.read_text().split()]

    @property
    def pid(self) -> int:
        return self.pids[-1]

    def crash(self, *, stay_down: bool) -> None:
        if stay_down:
            self.down_file.touch()
        os.kill(self.pid, signal.SIGKILL)

    def repair(self) -> None:
        self.down_file.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> Flaky:
    return Flaky(tmp_path_factory.mktemp("flaky"))


@pytest.fixture(scope="module")
async def servers(flaky: Flaky, sidecar: Sidecar) -> AsyncIterator[tuple[McpBridge, Database]]:
    configs = [
        flaky.config(),
        McpServerConfig(
            namespace="echo", **node_server("server-everything", "stdio"), include=["echo"]
        ),
        McpServerConfig(namespace="missing", command="/nonexistent/bin/mcp-server"),
        McpServerConfig(
            namespace="crashing",
            command="sh",
            args=["-c", "echo 'fatal: no licence key' >&2; exit 3"],
        ),
        # Reads its stdin and never answers.
        McpServerConfig(
            namespace="silent", command="sh", args=["-c", "cat >/dev/null"], startup_timeout=0.5
        ),
        McpServerConfig(namespace="nowhere", url="http://127.0.0.1:9/mcp"),
    ]
    async with McpBridge(configs) as bridge:
        db = await Database.create(
            resources=bridge.resources, writes=True, sidecar=sidecar, database="mcp_failures"
        )
        try:
            yield bridge, db
        finally:
            await db.close()


def failure(bridge: McpBridge, namespace: str) -> McpServerUnavailable:
    err = bridge.failures[namespace]
    assert isinstance(err, McpServerUnavailable)
    assert err.sqlstate == "38000"
    assert err.message.startswith(f'MCP server "{namespace}" is unreachable: ')
    assert err.hint and f"({namespace}_*)" in err.hint
    return err


async def test_servers_that_cannot_start_are_left_out(servers: tuple[McpBridge, Database]) -> None:
    bridge, db = servers
    assert set(bridge.failures) == {"missing", "crashing", "silent", "nowhere"}
    missing = failure(bridge, "missing")
    assert missing.reason == "its command '/nonexistent/bin/mcp-server' was not found"
    crashing = failure(bridge, "crashing")
    assert crashing.reason == "its process exited while starting"
    assert crashing.detail and "fatal: no licence key" in crashing.detail
    silent = failure(bridge, "silent")
    assert silent.reason.startswith("it did not finish starting within 0.5 s")
    nowhere = failure(bridge, "nowhere")
    assert nowhere.reason.startswith("cannot connect to http://127.0.0.1:9/mcp")
    # The others are served.
    assert {r.name for r in bridge.resources} == {
        "clock_get_current_time",
        "clock_conversions",
        "echo_echo",
    }
    r = await db.execute("SELECT text FROM echo_echo WHERE message = 'up'")
    assert r.rows == [("Echo: up",)]
    with pytest.raises(SqlError) as info:
        await db.execute("SELECT * FROM missing_anything")
    assert info.value.sqlstate == "42P01"


async def test_a_server_down_at_start_is_not_promised_a_retry(
    servers: tuple[McpBridge, Database],
) -> None:
    """Its tables were never made, so no query can start it: the HINT says to restart."""
    bridge, _ = servers
    for namespace in ("missing", "crashing", "silent", "nowhere"):
        hint = failure(bridge, namespace).hint
        assert hint and "are not served" in hint
        assert "restart glove-scratchpad once the server is up" in hint
        assert "next query" not in hint


async def test_a_server_that_goes_down_fails_only_its_tables(
    servers: tuple[McpBridge, Database], flaky: Flaky
) -> None:
    _, db = servers
    now = "SELECT day_of_week FROM clock_get_current_time WHERE timezone = 'UTC'"
    assert len((await db.execute(now)).rows) == 1
    first = flaky.pid

    flaky.crash(stay_down=True)
    with pytest.raises(McpServerUnavailable) as info:
        await db.execute(now)
    err = info.value
    assert err.message == (
        'MCP server "clock" is unreachable: its process exited while starting'
    )  # the read was retried on a new process, which refused
    assert err.detail and "flaky: down for maintenance" in err.detail
    assert err.hint and "started (or reconnected) again on the next query" in err.hint
    # Its tables fail, also inside a statement that reads another server's...
    with pytest.raises(McpServerUnavailable, match='"clock" is unreachable'):
        await db.execute(
            "SELECT e.text, c.day_of_week FROM echo_echo e, clock_get_current_time c"
            " WHERE e.message = 'x' AND c.timezone = 'UTC'"
        )
    # ...while the other server's tables work.
    r = await db.execute("SELECT text FROM echo_echo WHERE message = 'still up'")
    assert r.rows == [("Echo: still up",)]

    flaky.repair()
    assert len((await db.execute(now)).rows) == 1  # started again
    assert flaky.pid != first


async def test_a_write_cut_off_is_not_retried(
    servers: tuple[McpBridge, Database], flaky: Flaky
) -> None:
    _, db = servers
    convert = (
        "INSERT INTO clock_conversions (source_timezone, time, target_timezone)"
        " VALUES ('UTC', '12:00', 'Asia/Tokyo') RETURNING time_difference"
    )
    assert (await db.execute(convert)).rows == [("+9.0h",)]
    flaky.crash(stay_down=False)
    # The call was handed to a session that then ended without an answer: from here, that
    # is the same as a tool that crashed its server half way, so the write is in doubt.
    with pytest.raises(TransactionResolutionUnknown) as info:
        await db.execute(convert)
    assert info.value.message.startswith(
        'MCP tool "convert_time" of server "clock": the call was sent and its process exited '
        "or closed the connection before answering, so the write may have happened")
    # Not made again by itself; the next call starts the server again.
    assert (await db.execute(convert)).rows == [("+9.0h",)]


async def test_a_closed_connection_says_so() -> None:
    connection = McpConnection({"namespace": "gone", "command": "true"})
    await connection.aclose()
    with pytest.raises(McpServerUnavailable, match="its connection was closed"):
        await connection.call_tool("anything", {})


async def test_concurrent_first_calls_share_one_start(flaky: Flaky) -> None:
    flaky.repair()
    starts = len(flaky.pids)
    async with McpConnection(flaky.config()) as connection:
        results = await asyncio.gather(
            *(connection.call_tool("get_current_time", {"timezone": "UTC"}) for _ in range(5))
        )
        assert [r.is_error for r in results] == [False] * 5
        tools: list[Tool] = await connection.list_tools()
        assert {t.name for t in tools} == {"get_current_time", "convert_time"}
    assert len(flaky.pids) == starts + 1


async def test_an_http_server_that_restarts_is_reconnected(sidecar: Sidecar) -> None:
    port = free_port()
    proc = await start_everything_http(port)
    config = McpServerConfig(namespace="web", url=f"http://127.0.0.1:{port}/mcp", include=["echo"])
    echo = "SELECT text FROM web_echo WHERE message = 'hi'"
    try:
        async with McpBridge([config]) as bridge:
            db = await Database.create(
                resources=bridge.resources, sidecar=sidecar, database="mcp_http_restart"
            )
            try:
                assert (await db.execute(echo)).rows == [("Echo: hi",)]
                await stop(proc)
                with pytest.raises(McpServerUnavailable) as info:
                    await db.execute(echo)
                assert info.value.reason.startswith(f"cannot connect to {config.url}")
                proc = await start_everything_http(port)
                assert (await db.execute(echo)).rows == [("Echo: hi",)]
                # Restarted between two calls: the old session is gone, a new one is made.
                await stop(proc)
                proc = await start_everything_http(port)
                assert (await db.execute(echo)).rows == [("Echo: hi",)]
            finally:
                await db.close()
    finally:
        await stop(proc)
