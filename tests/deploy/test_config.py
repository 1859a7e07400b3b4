"""What a container needs of the command line: settings from the environment, and a true
banner when listening on every address (its health check: tests/server/test_health.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from glove_scratchpad.server.config import load_config
from glove_scratchpad.server.net.auth import parse_verifier
from glove_scratchpad.server.net.server import Server


def test_settings_come_from_the_environment_under_the_command_line():
    env = {"GLOVE_SCRATCHPAD_SIDECAR_DSN": "postgresql://u:p@postgres:5432/db",
           "GLOVE_SCRATCHPAD_NAME": "support", "GLOVE_SCRATCHPAD_WORKERS": "3",
           "GLOVE_SCRATCHPAD_WRITES": "true", "GLOVE_SCRATCHPAD_USER": "agent",
           "GLOVE_SCRATCHPAD_PASSWORD": "s3cret", "GLOVE_SCRATCHPAD_PORT": "6000",
           "UNRELATED": "x"}
    config = load_config(None, environ=env, port=7000)
    assert (config.sidecar_dsn, config.name, config.workers, config.writes, config.port) == (
        "postgresql://u:p@postgres:5432/db", "support", 3, True, 7000)
    user = config.users["agent"]
    parse_verifier(user.password)  # a verifier, never the password itself
    assert "s3cret" not in user.password and user.writes
    with pytest.raises(ValueError, match="PASSWORD"):
        load_config(None, environ={"GLOVE_SCRATCHPAD_USER": "agent"})
    with pytest.raises(ValueError, match="name"):
        load_config(None, environ={"GLOVE_SCRATCHPAD_NAME": "public"})


def test_retention_and_the_cancel_host_come_from_the_environment_too():
    config = load_config(None, environ={"GLOVE_SCRATCHPAD_RETENTION_DAYS": "30",
                                        "GLOVE_SCRATCHPAD_CANCEL_HOST": "10.0.0.7"})
    assert (config.limits().retention_days, config.cancel_host) == (30.0, "10.0.0.7")
    assert load_config(None, environ={}).limits().retention_days is None  # kept for ever
    with pytest.raises(ValueError, match="retention_days"):
        load_config(None, environ={"GLOVE_SCRATCHPAD_RETENTION_DAYS": "0"})


def test_the_banner_never_says_connect_to_0_0_0_0():
    config = load_config(None, environ={}, host="0.0.0.0", port=55432)
    banner = Server(config, SimpleNamespace(resources={})).banner()  # type: ignore[arg-type]
    assert "psql -h 0.0.0.0" not in banner
    assert "psql -h localhost -p 55432" in banner and "this machine's" in banner
