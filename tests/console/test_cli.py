"""``serve --console-port``: the banner says where the console is, the console signs a
role in against the server's own users, and a server that cannot serve it (no users,
several workers) is refused in one line before anything starts."""

from __future__ import annotations

import re
import subprocess

import httpx

from glove_scratchpad.server.net.auth import make_verifier

from ..fix_cli import SERVE, cli_server


def _config(tmp_path, users: bool = True):
    path = tmp_path / "server.toml"
    text = ""
    if users:
        text += f'[users.ops]\npassword = "{make_verifier("ops-pw")}"\nadmin = true\n'
    path.write_text(text)
    return str(path)


async def test_serve_with_a_console_port_serves_the_console(sidecar, tmp_path) -> None:
    async with cli_server("--config", _config(tmp_path), "--sidecar-dsn",
                          sidecar.dsn.replace("/scratchpad?", "/postgres?"),  # a database it has
                          "--name", "console_cli", "--port", "0",
                          "--console-port", "0") as running:
        found = re.search(r"console:  (http://127\.0\.0\.1:\d+/)\n", running.banner)
        assert found, running.banner
        base = found[1]
        async with httpx.AsyncClient(base_url=base) as http:
            form = await http.get("/sign-in")
            assert "script-src 'self'" in form.headers["content-security-policy"]
            token = re.search(r'name="csrf" value="([^"]+)"', form.text)[1]
            signed = await http.post("/sign-in", data={"csrf": token, "user": "ops",
                                                       "password": "ops-pw"})
            assert signed.status_code == 303
            page = await http.get("/activity")
            assert "this console" in page.text  # its own session, seen through the server


def test_a_console_without_users_or_with_workers_is_refused(tmp_path) -> None:
    for args, said in (([], "configure [users.NAME] tables"),
                       (["--config", _config(tmp_path), "--workers", "2"],
                        "one-process server")):
        done = subprocess.run([*SERVE, "--console-port", "0", "--port", "0", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert said in done.stderr
        assert "Traceback" not in done.stderr
