"""The image on a real engine: built as README.md says with no network (the stand-in
base, a wheelhouse), run as README.md says, as a user of its own and without build
tools; and the build context that .dockerignore leaves.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterator

import pytest

from .fix_docker import FILES, README, documented, free_port, run, until

pytestmark = pytest.mark.timeout(600)
IMAGE = "glovetest/glove-scratchpad"


def _swap(argv: list[str], old: str, new: str) -> list[str]:
    assert argv.count(old) == 1, (old, argv)
    return [new if a == old else a for a in argv]


@pytest.fixture(scope="module")
def image() -> str:
    """README's `docker build`, with the tests' base image and wheelhouse."""
    argv = _swap(documented(README, "docker build"), "glove-scratchpad", IMAGE)
    args = ["--build-arg", f"BASE_IMAGE={os.environ['BASE_IMAGE']}",
            "--build-arg", f"WHEELHOUSE={os.environ['WHEELHOUSE']}"]
    run([*argv[:2], "--network", "none", *args, *argv[2:]])  # and no network
    return IMAGE


def _run_as_documented(image: str, port: int, name: str, *, users: bool) -> None:
    argv = _swap(documented(README, "docker run"), "glove-scratchpad", image)
    argv = _swap(argv, "55432:55432", f"127.0.0.1:{port}:55432")
    if not users:  # the same command, less its `-e GLOVE_SCRATCHPAD_…=…` pairs
        pairs = [i for i, a in enumerate(argv) if a.startswith("GLOVE_SCRATCHPAD_")]
        assert pairs and all(argv[i - 1] == "-e" for i in pairs), argv
        argv = [a for i, a in enumerate(argv) if i not in pairs and i + 1 not in pairs]
    run([*argv[:2], "-d", "--name", name, *argv[2:]])


def _healthy(name: str) -> bool:
    state = run(["docker", "inspect", "-f", "{{.State.Health.Status}}", name]).stdout
    return state.strip() == "healthy"


@pytest.fixture(scope="module")
def containers(image: str) -> Iterator[dict[str, int]]:
    """README's `docker run`, with its users and without them, started together:
    each container's published port, once its health check passes."""
    ports = {"glovetest-run": free_port(), "glovetest-nousers": free_port()}
    run(["docker", "rm", "-f", *ports], check=False)  # an earlier run's, stopped mid-way
    try:
        for name, port in ports.items():
            _run_as_documented(image, port, name, users=name == "glovetest-run")
        for name in ports:
            until(functools.partial(_healthy, name), f"{name} healthy", timeout=120)
        yield ports
    finally:
        run(["docker", "rm", "-f", *ports], check=False)


def test_docker_run_serves_the_users_the_readme_names(containers: dict[str, int]):
    port = containers["glovetest-run"]
    argv = documented(README, "docker run")
    env = dict(a.split("=", 1) for a in argv if a.startswith("GLOVE_SCRATCHPAD_"))
    user, password = env["GLOVE_SCRATCHPAD_USER"], env["GLOVE_SCRATCHPAD_PASSWORD"]
    done = subprocess.run(
        ["psql", f"postgresql://{user}:{password}@127.0.0.1:{port}/scratchpad", "-XAtc",
         "SELECT count(*) > 0 FROM web WHERE query = 'postgres'"],
        capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "t", "")
    # The server and its embedded sidecar run as the image's user, not root.
    top = run(["docker", "top", "glovetest-run", "-o", "pid,uid,args"]).stdout.splitlines()[1:]
    assert any("postgres" in line for line in top) and all(
        line.split()[1] != "0" for line in top), top


def test_without_users_the_refusal_names_the_variables_to_set(containers: dict[str, int]):
    port = containers["glovetest-nousers"]
    done = subprocess.run(["psql", f"postgresql://agent@127.0.0.1:{port}/scratchpad",
                           "-XAtc", "SELECT 1"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "GLOVE_SCRATCHPAD_USER" in done.stderr and "GLOVE_SCRATCHPAD_PASSWORD" in done.stderr


def test_the_image_has_no_build_tools_and_a_user_of_its_own(image: str):
    done = run(["docker", "run", "--rm", "--entrypoint", "sh", image, "-c",
                "id -u; for t in gcc cc c++ make ld pip pip3; do command -v $t; done; "
                "ls /opt/glove-scratchpad/lib/python3*/site-packages"])
    uid, *rest = done.stdout.split()
    assert uid != "0"
    assert [line for line in rest if "/" in line] == []  # no tool found on PATH
    assert not {"pip", "setuptools"} & {name.split("-")[0] for name in rest}


def test_the_build_context_leaves_out_venvs_caches_and_git():
    """What .dockerignore sends to the engine, seen from inside an image built on it
    (with the wheelhouse the tests build there, and the caches the tests leave)."""
    dockerfile = FILES / "context.Dockerfile"
    run(["docker", "build", "-t", "glovetest/context", "-f", str(dockerfile),
         "--build-arg", f"BASE_IMAGE={os.environ['BASE_IMAGE']}", "."])
    listing = run(["docker", "run", "--rm", "glovetest/context"]).stdout.splitlines()
    size_kb, *paths = listing
    names = {part for path in paths for part in path.split("/")}
    assert not names & {".venv", ".git", "node_modules", "__pycache__", ".pytest_cache",
                        ".mypy_cache", ".ruff_cache", ".hypothesis"}, names
    wheelhouse = os.environ["WHEELHOUSE"]
    assert any(p.startswith(f"./{wheelhouse}/glove_scratchpad-") for p in paths)
    assert int(size_kb) < 300_000, f"a build context of {size_kb} KB"
