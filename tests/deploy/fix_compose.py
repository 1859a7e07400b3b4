"""docker-compose.yml read the way ``docker compose`` reads it, and the one piece of
Docker that the topology needs from outside: a DNS that names each service.

- ``services()``: the compose file with its ``${VAR:-default}`` interpolated from an
  environment (``docker compose`` takes them from the shell and ``.env``).
- ``Dns``: a tiny UDP DNS answering A queries for service names, as Docker's
  embedded DNS does for every replica of a scaled service.
"""

from __future__ import annotations

import asyncio
import re
import socket
import struct
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


class Dns(asyncio.DatagramProtocol):
    """Answers ``A`` queries for the names in ``hosts``; any other, with no answer."""

    def __init__(self, hosts: Mapping[str, list[str]]) -> None:
        self.hosts = {k.lower(): v for k, v in hosts.items()}
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            reply = self.answer(data)
        except (IndexError, struct.error):
            return
        assert self.transport is not None
        self.transport.sendto(reply, addr)

    def answer(self, query: bytes) -> bytes:
        qid, _flags, _count = struct.unpack("!HHH", query[:6])
        i, labels = 12, []
        while query[i]:
            labels.append(query[i + 1:i + 1 + query[i]].decode())
            i += 1 + query[i]
        qtype, _ = struct.unpack("!HH", query[i + 1:i + 5])
        question = query[12:i + 5]
        name = ".".join(labels).lower().rstrip(".")
        addresses = self.hosts.get(name, []) if qtype == 1 else []
        rcode = 0 if name in self.hosts else 3
        header = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, len(addresses), 0, 0)
        records = b"".join(struct.pack("!HHHIH", 0xC00C, 1, 1, 1, 4) + socket.inet_aton(a)
                           for a in addresses)
        return header + question + records


async def start_dns(host: str, port: int, hosts: Mapping[str, list[str]]
                    ) -> asyncio.DatagramTransport:
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: Dns(hosts), local_addr=(host, port))
    return transport  # type: ignore[return-value]
