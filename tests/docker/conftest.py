"""The docker tests need a Docker engine, the stand-in images and a wheelhouse, which
``make test-docker`` (scripts/test-docker) provides; ``make test`` skips them.

``stack`` is the one compose project the tests share: docker-compose.yml started
as README.md says (``docker compose up -d --build``), with the stand-ins, the
wheelhouse, writes allowed, the tests' config (GLOVE_CONFIG) and its secret
(GLOVE_ENV_FILE), and the tests' API beside it; taken down at the end.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from .fix_docker import README, Stack, free_port, until

HERE = Path(__file__).resolve().parent
READY = os.environ.get("GLOVE_TEST_DOCKER") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "docker: needs a Docker engine and the stand-in images (make test-docker)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="the docker tests run with `make test-docker`")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.docker)
            if not READY:
                item.add_marker(skip)


def _connects(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.OperationalError:
        return False


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env_file = tmp_path_factory.mktemp("compose") / "secrets.env"
    token = secrets.token_hex(16)
    env_file.write_text(f"SKY_TOKEN={token}\n")
    s = Stack("glovetest", {
        "GLOVE_WRITES": "true",
        "GLOVE_CONFIG": "./tests/docker/files/glove-scratchpad.toml",
        "GLOVE_ENV_FILE": str(env_file),
    }, port=free_port())
    s.env["GLOVE_PORT"] = str(s.port)
    s.env["SKY_TOKEN_FOR_TESTS"] = token  # not the compose file's: what the tests compare
    s.compose("down", "-v", "--remove-orphans")  # an earlier run's, stopped mid-way
    try:
        s.documented(README, "docker compose up")
        try:
            until(lambda: s.healthy("server", 1), "a healthy server")
            until(lambda: _connects(s.url), "a connection through the balancer", timeout=60)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{s.logs()}") from None
        yield s
    finally:
        s.compose("down", "-v", "--remove-orphans", check=False)
