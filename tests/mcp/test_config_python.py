"""``command = "python"`` runs this interpreter, not whichever python is first on PATH."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from glove_scratchpad.resources.mcp import McpConnection, McpServerConfig, McpServerUnavailable

from .conftest import python_server

# A python that is not this one: it says so on stderr and exits.
IMPOSTOR = "#!/bin/sh\necho 'the python on PATH ran' >&2\nexit 7\n"


@pytest.fixture
def impostor_path(tmp_path: Path) -> str:
    """A PATH whose only python and python3 are impostors."""
    for name in ("python", "python3"):
        script = tmp_path / name
        script.write_text(IMPOSTOR)
        script.chmod(0o755)
    return str(tmp_path)


def time_args() -> list[str]:
    return list(python_server("mcp_server_time", "--local-timezone", "UTC")["args"])


@pytest.mark.parametrize("command", ["python", "python3"])
def test_the_program_is_this_interpreter(command: str) -> None:
    config = McpServerConfig(namespace="clock", command=command)
    assert config.program == sys.executable
    assert config.where == command  # messages show the command as configured
    assert McpServerConfig(namespace="node", command="node").program == "node"


@pytest.mark.parametrize("command", ["python", "python3"])
async def test_python_runs_this_interpreter(command: str, impostor_path: str) -> None:
    config = McpServerConfig(
        namespace="clock", command=command, args=time_args(), env={"PATH": impostor_path}
    )
    async with McpConnection(config) as connection:
        tools = await connection.list_tools()
    assert {t.name for t in tools} == {"get_current_time", "convert_time"}


async def test_the_impostor_would_have_run(impostor_path: str) -> None:
    """The control: the same PATH, with python looked up by a shell, finds the impostor."""
    config = McpServerConfig(
        namespace="clock",
        command="/bin/sh",
        args=["-c", 'exec python "$@"', "sh", *time_args()],
        env={"PATH": impostor_path},
    )
    async with McpConnection(config) as connection:
        with pytest.raises(McpServerUnavailable) as info:
            await connection.list_tools()
    assert info.value.detail and "the python on PATH ran" in info.value.detail
