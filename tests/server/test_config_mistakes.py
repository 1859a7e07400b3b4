"""A mistake in how the server is started is one line that names it and says what to do,
never a traceback nor a default silently kept: a misspelt key in any section of the config
file, a missing file, a port another process holds."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli"]


async def _refused(*args: str) -> str:
    """``glove-scratchpad`` with ``args``: it must end with status 2 and one line."""
    proc = await asyncio.create_subprocess_exec(
        *CLI, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    text = err.decode()
    assert proc.returncode == 2, text
    assert out == b"" and "Traceback" not in text, text
    assert len(text.strip().splitlines()) == 1, text
    return text.strip()


@pytest.mark.parametrize(("toml", "said"), [
    ("[server]\nprot = 5\n", "[server] has no key 'prot'; did you mean port?"),
    ("[sever]\nport = 5\n", "the top level has no key 'sever'; did you mean server"),
    ('[users.ann]\npassword = "x"\nwrite = true\n',
     "[users.ann] has no key 'write'; did you mean writes?"),
    ("[mcp]\nserver = []\n", "[mcp] has no key 'server'; did you mean servers?"),
    ('[[mcp.servers]]\nnamespace = "t"\ncommand = "x"\ntimout = 5\n',
     "[[mcp.servers]] namespace = 't' has no key 'timout'; did you mean timeout?"),
    ('[[mcp.servers]]\nnamespace = "t"\ncommand = "x"\n[mcp.servers.tools.now]\n'
     'volatilty = "stable"\n',
     "[[mcp.servers]] namespace = 't' tools.now has no key 'volatilty'; did you mean "
     "volatility?"),
    ('[[openapi.apis]]\nnamespace = "z"\nspec = "x.yaml"\nheadres = { A = "secret-1" }\n',
     "[[openapi.apis]] namespace = 'z' has no key 'headres'; did you mean headers or reads "
     "or spec_headers?"),
    ('[[openapi.apis]]\nnamespace = "z"\nspec = "x.yaml"\n[[openapi.apis.tables]]\n'
     'name = "t"\nselct = "GET /things"\n',
     "[[openapi.apis]] namespace = 'z' tables[1] has no key 'selct'; did you mean select?"),
])
@pytest.mark.parametrize("command", ["serve", "mcp"])
async def test_a_misspelt_key_in_any_section_is_refused_by_name(
        tmp_path: Path, command: str, toml: str, said: str) -> None:
    config = tmp_path / "glove.toml"
    config.write_text(toml)
    line = await _refused(command, "--config", str(config), "--port", "0")
    assert line.startswith(f"glove-scratchpad: the config file: {said}"), line
    assert "secret-1" not in line


@pytest.mark.parametrize(("args", "said"), [
    (["--config", "missing.toml"], "no config file missing.toml: give --config the path of"),
    (["--resources", "missing.py"], "no such file: missing.py: give --resources"),
    (["--resources", "no_such_module_here"], "no module named 'no_such_module_here'"),
])
async def test_a_missing_file_is_one_line(tmp_path: Path, args: list[str], said: str) -> None:
    line = await _refused("serve", "--port", "0", "--sidecar-dir", str(tmp_path / "pg"), *args)
    assert said in line, line


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_port_in_use_is_one_line(tmp_path: Path, workers: str) -> None:
    module = tmp_path / "one.py"
    module.write_text("from glove_scratchpad.resources import define_resource\n"
                      "resources = [define_resource('one', columns=[('n', 'bigint')], "
                      "volatility='volatile', select=lambda b: [{'n': 1}])]\n")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        line = await _refused("serve", "--port", str(port), "--workers", workers,
                              "--resources", str(module),
                              "--sidecar-dir", str(tmp_path / "pg"))
    assert line == (f"glove-scratchpad: 127.0.0.1:{port} is in use by another process: "
                    "stop it, or give this server another --port (0 picks a free one)")
    assert not (tmp_path / "pg" / "postmaster.pid").exists()  # its sidecar was stopped
