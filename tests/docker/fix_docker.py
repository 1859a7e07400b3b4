"""The project's Docker files on a real engine: commands run the way a user runs them.

- ``documented(path, words)``: the command of a code block in README.md or
  docs/deploy.md that starts with ``words``, split as a shell splits it: the tests
  run those commands, with only the tests' own names and ports put in.
- ``Stack``: one compose project (``-p``) of docker-compose.yml with the tests' API
  beside it (files/compose.api.yml), its variables, and what it runs.
- ``compose_command()``: ``docker compose`` (v2) where the CLI has it, else
  ``docker-compose`` (v1.29, Debian's); ``GLOVE_TEST_COMPOSE`` chooses.

The engine, the stand-in images (BASE_IMAGE, POSTGRES_IMAGE, HAPROXY_IMAGE) and the
wheelhouse (WHEELHOUSE) come from the environment ``scripts/test-docker`` sets.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
FILES = Path(__file__).resolve().parent / "files"
README = ROOT / "README.md"
DEPLOY = ROOT / "docs" / "deploy.md"
API_COMPOSE = "tests/docker/files/compose.api.yml"
T = TypeVar("T")


def run(argv: list[str], *, env: dict[str, str] | None = None, check: bool = True,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=ROOT, env={**os.environ, **(env or {})}, text=True,
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} exited {done.returncode}:\n"
                             f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done


@functools.cache
def compose_command() -> tuple[str, ...]:
    chosen = os.environ.get("GLOVE_TEST_COMPOSE")
    if chosen:
        return tuple(shlex.split(chosen))
    if run(["docker", "compose", "version"], check=False, timeout=60).returncode == 0:
        return ("docker", "compose")
    return ("docker-compose",)


def documented(path: Path, words: str) -> list[str]:
    """The one command of the page's code blocks that starts with ``words``."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", path.read_text(), re.S | re.M)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    found = [shlex.split(line, comments=True) for line in lines
             if line.strip().startswith(words + " ") or line.strip() == words]
    assert len(found) == 1, f"{path.name} should show `{words} …` once: {found}"
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], T | None], what: str, timeout: float = 180.0,
          every: float = 0.5) -> T:
    """``check()``'s first true value, tried until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen in {timeout:.0f}s")
        time.sleep(every)


@dataclass
class Stack:
    """A compose project of the tests: its name, its variables, and what it runs."""

    project: str
    env: dict[str, str]
    port: int
    user: str = "agent"
    password: str = "agent"
    files: list[str] = field(default_factory=lambda: ["docker-compose.yml", API_COMPOSE])

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/scratchpad"

    def compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        flags = [a for f in self.files for a in ("-f", f)]
        return run([*compose_command(), "-p", self.project, *flags, *args], env=self.env,
                   check=check)

    def documented(self, path: Path, words: str) -> subprocess.CompletedProcess[str]:
        """A documented ``docker compose …`` command, run on this project."""
        argv = documented(path, words)
        assert argv[:2] == ["docker", "compose"], argv
        return self.compose(*argv[2:])

    def containers(self, service: str | None = None, *, every: bool = False) -> list[str]:
        argv = ["docker", "ps", "-q", "--no-trunc",
                "--filter", f"label=com.docker.compose.project={self.project}"]
        if service:
            argv += ["--filter", f"label=com.docker.compose.service={service}"]
        if every:
            argv.append("--all")
        return run(argv).stdout.split()

    def healthy(self, service: str, count: int) -> list[str] | None:
        ids = self.containers(service)
        if len(ids) != count:
            return None
        states = run(["docker", "inspect", "-f", "{{.State.Health.Status}}", *ids]).stdout
        return ids if states.split() == ["healthy"] * count else None

    def logs(self) -> str:
        return self.compose("logs", "--no-color", "--tail", "40", check=False).stdout
