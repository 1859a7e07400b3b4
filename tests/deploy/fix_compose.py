"""docker-compose.yml and the Dockerfile read the way Docker reads them, for their lint.

- ``services()``: the compose file with its ``${VAR:-default}`` interpolated from an
  environment (``docker compose`` takes them from the shell and ``.env``).
- ``dockerfile()``: the Dockerfile's ENV, ENTRYPOINT, CMD and HEALTHCHECK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"

_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Compose's interpolation: ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``$$``."""
    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(3)
        value = env.get(name)
        return value if value else (m.group(2) or "")
    return _VAR.sub(one, text)


def variables(text: str) -> set[str]:
    """The variables a compose file interpolates."""
    return {m.group(1) or m.group(3) for m in _VAR.finditer(text) if m.group(0) != "$$"}


def services(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    raw = yaml.safe_load(COMPOSE.read_text())

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return interpolate(node, env or {})
        if isinstance(node, list):
            return [walk(x) for x in node]
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return node

    return walk(raw)["services"]


def dockerfile() -> dict[str, Any]:
    """The Dockerfile's ENV, ENTRYPOINT, CMD and HEALTHCHECK, as JSON arrays where given."""
    import json
    import shlex

    out: dict[str, Any] = {"ENV": {}}
    lines = DOCKERFILE.read_text().replace("\\\n", " ").splitlines()
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        word, _, rest = line.strip().partition(" ")
        if word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                out["ENV"][key] = value
        elif word in ("ENTRYPOINT", "CMD"):
            out[word] = json.loads(rest)
        elif word == "HEALTHCHECK":
            out[word] = json.loads(rest[rest.index("CMD") + 3:].strip())
        else:
            out.setdefault(word, []).append(rest)
    return out
