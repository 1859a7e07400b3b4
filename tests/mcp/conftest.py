"""Real MCP servers for the bridge tests, and one Database serving all of them.

The Python servers (``mcp-server-time``, ``mcp-server-git``) run from the venv;
the Node ones (``@modelcontextprotocol/server-memory`` and ``server-everything``)
from ``tests/mcp/node`` (``npm ci --prefix tests/mcp/node``). A server that is
not installed is a failure, never a skip.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glove_scratchpad.catalog import Sidecar
from glove_scratchpad.resources.mcp import McpBridge, McpServerConfig, ToolOverride
from glove_scratchpad.server import Database

from ..fix_server import free_port

NODE_DIR = Path(__file__).parent / "node"
NODE_INSTALL = "npm ci --prefix tests/mcp/node"


def python_server(module: str, *args: str) -> dict[str, Any]:
    """command/args of a Python MCP server installed in this interpreter's environment."""
    if importlib.util.find_spec(module) is None:
        pytest.fail(
            f"the MCP server {module} is not installed: pip install {module.replace('_', '-')}"
        )
    return {"command": sys.executable, "args": ["-m", module, *args]}


def node_server(package: str, *args: str) -> dict[str, Any]:
    """command/args of an npm MCP server installed under tests/mcp/node."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; the npm MCP servers need Node 20 or later")
    script = NODE_DIR / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not script.is_file():
        pytest.fail(f"@modelcontextprotocol/{package} is not installed: run {NODE_INSTALL}")
    return {"command": node, "args": [str(script), *args]}


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_SYSTEM": os.devnull,
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


COMMITS = ["Add the parser", "Fix the lexer", "Document the grammar"]


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with three commits (newest last in COMMITS)."""
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    for n, message in enumerate(COMMITS):
        (repo / f"file{n}.txt").write_text(f"{message}\n")
        git(repo, "add", f"file{n}.txt")
        git(repo, "commit", "-q", "-m", message)
    return repo


@pytest.fixture(scope="session")
def memory_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory") / "memory.jsonl"


async def start_everything_http(port: int) -> asyncio.subprocess.Process:
    """server-everything over streamable HTTP on a local port, once it accepts connections."""
    spec = node_server("server-everything", "streamableHttp")
    proc = await asyncio.create_subprocess_exec(
        spec["command"],
        *spec["args"],
        env={**os.environ, "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if proc.returncode is not None or time.monotonic() > deadline:
                await stop(proc)
                pytest.fail("server-everything (streamableHttp) did not start")
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return proc


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


@pytest.fixture(scope="session")
async def everything_url() -> AsyncIterator[str]:
    port = free_port()
    proc = await start_everything_http(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await stop(proc)


@pytest.fixture(scope="session")
def server_configs(memory_file: Path, everything_url: str) -> list[McpServerConfig]:
    return [
        McpServerConfig(
            namespace="time", **python_server("mcp_server_time", "--local-timezone", "UTC")
        ),
        McpServerConfig(namespace="git", **python_server("mcp_server_git")),
        McpServerConfig(
            namespace="memory",
            **node_server("server-memory"),
            env={"MEMORY_FILE_PATH": str(memory_file)},
            # search_nodes answers {entities, relations}: serve its entities as the rows.
            tools={
                "search_nodes": ToolOverride(rows="entities"),
                "open_nodes": ToolOverride(table="memory_relations", rows="relations"),
            },
        ),
        McpServerConfig(
            namespace="everything",
            **node_server("server-everything", "stdio"),
            exclude=["trigger-long-running-operation", "simulate-research-query"],
        ),
        McpServerConfig(
            namespace="web",
            url=everything_url,
            headers={"X-Glove-Test": "1"},
            include=["echo", "get-sum"],
        ),
    ]


@pytest.fixture(scope="session")
async def bridge(server_configs: list[McpServerConfig]) -> AsyncIterator[McpBridge]:
    async with McpBridge(server_configs) as bridge:
        assert bridge.failures == {}, bridge.failures
        yield bridge


@pytest.fixture(scope="session")
async def db(bridge: McpBridge, sidecar: Sidecar) -> AsyncIterator[Database]:
    database = await Database.create(
        resources=bridge.resources, writes=True, sidecar=sidecar, database="mcp_bridge"
    )
    yield database
    await database.close()
