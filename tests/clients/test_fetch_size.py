"""pgjdbc's ``setFetchSize`` and node-postgres' ``Cursor`` over a 10,000-row paged resource.

Each client reads the plain SELECT, then the same rows through a portal, ten at a time
(``programs/FetchSize.java``, ``programs/cursor.js``). After its first ten rows it waits,
and the test counts the pages the resource asked its upstream for: those of about ten
rows, one page, where the plain SELECT asked for all of them. The rows equal the plain
SELECT's, and the portal made one call.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ..external.fix_clients import JDBC_JAR, NODE_DIR, RUN_TIMEOUT, java, node
from .fix_paged import PAGE, ROWS, pages_for

PROGRAMS = Path(__file__).parent / "programs"


class Conversation:
    """A client program that prints a line, then waits for one on stdin to go on."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, *argv: str | Path, env: dict[str, str] | None = None
                    ) -> Conversation:
        return cls(await asyncio.create_subprocess_exec(
            *map(str, argv), env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))

    async def line(self) -> str:
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), RUN_TIMEOUT)
        except TimeoutError:
            self.proc.kill()
            pytest.fail(f"the client printed nothing within {RUN_TIMEOUT} s")
        if not line:
            await self.proc.wait()
            assert self.proc.stderr is not None
            pytest.fail(f"the client ended: {(await self.proc.stderr.read()).decode()}")
        return line.decode().strip()

    def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"\n")

    async def end(self) -> tuple[int, str]:
        assert self.proc.stderr is not None and self.proc.stdin is not None
        self.proc.stdin.close()  # nothing more to say: a reader of stdin ends too
        err = await asyncio.wait_for(self.proc.stderr.read(), RUN_TIMEOUT)
        return await self.proc.wait(), err.decode()


async def _read_in_parts(client: Conversation, paged: Any, parse: Any) -> list[Any]:
    """The conversation: the plain read, then the first ten rows, counted at each step."""
    up = paged.upstream
    said = [parse(await client.line())]
    assert (up.calls, len(up.pages)) == (1, ROWS // PAGE)  # the plain SELECT: every page
    up.reset()
    client.go_on()
    said.append(parse(await client.line()))
    # After the first fetch of ten: one call, and the pages of about ten rows alone.
    assert (up.calls, up.pages) == (1, list(range(pages_for(10))))
    client.go_on()
    said.append(parse(await client.line()))
    return said


async def test_pgjdbc_fetch_size_reads_the_pages_of_its_rows(paged):
    url = (f"jdbc:postgresql://127.0.0.1:{paged.port}/scratchpad"
           "?user=agent&ApplicationName=fetch-size")
    client = await Conversation.start(java(), "-XX:TieredStopAtLevel=1", "-cp", JDBC_JAR,
                                      PROGRAMS / "FetchSize.java", url)

    def parse(line: str) -> tuple[str, str]:
        key, _, value = line.partition(": ")
        return key, value

    said = await _read_in_parts(client, paged, parse)
    assert said[0][0] == "plain" and said[1] == ("first", "10")
    assert parse(await client.line()) == ("same", "true")
    assert said[2] == ("rows", str(ROWS))
    assert await client.end() == (0, "")
    up = paged.upstream
    assert (up.calls, len(up.pages), up.closed) == (1, ROWS // PAGE, 0)


async def test_node_postgres_cursor_reads_the_pages_of_its_rows(paged):
    node()  # installed, with node-postgres
    if not (NODE_DIR / "node_modules" / "pg-cursor" / "package.json").is_file():
        pytest.fail("pg-cursor is not installed: run npm ci --prefix tests/external/node")
    env = {**os.environ, "NODE_PATH": str(NODE_DIR / "node_modules")}
    client = await Conversation.start(node(), PROGRAMS / "cursor.js", paged.dsn, env=env)
    said = await _read_in_parts(client, paged, json.loads)
    assert said[0] == {"plain": ROWS} and said[1] == {"first": 10}
    assert said[2] == {"rows": ROWS, "same": True}
    assert await client.end() == (0, "")
    up = paged.upstream
    assert (up.calls, len(up.pages)) == (1, ROWS // PAGE)
