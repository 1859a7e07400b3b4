"""``glove-scratchpad mcp --http`` signs its clients in, through the wire.

A real server (the app ``--http`` serves, on uvicorn, or the command itself) and real
clients: the mcp SDK's over streamable HTTP, and raw HTTP requests for what the SDK
would never send. The tables come from the tests' own HTTP API (``tests/openapi``),
whose roles carry per-user tokens, so the API itself says as whom a call ran.
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from glove_scratchpad.resources.openapi import OpenApiBridge
from glove_scratchpad.server import Database
from glove_scratchpad.server.config import load_config
from glove_scratchpad.server.mcp_http import check_listen
from glove_scratchpad.server.mcp_server import CATALOG_URI, http_app
from glove_scratchpad.server.net.auth import User, make_verifier

from ..fix_http import http_served
from ..openapi.fix_api import Api, api_entry, api_served

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli", "mcp"]
ANN_TOKEN = "ann-mcp-token-0123456789"
BOB_PASSWORD = "bob-pw"
INCLUDE = ["secureItems", "listThings", "getThing"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


def users() -> dict[str, User]:
    """ann signs in with a token and sees everything; bob with his password, and may not
    see the things."""
    return {"ann": User(password=make_verifier("ann-pw"), mcp_token=ANN_TOKEN),
            "bob": User(password=make_verifier(BOB_PASSWORD), deny=["t_list_things"])}


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@asynccontextmanager
async def mcp_served(app: Any, host: str) -> AsyncIterator[str]:
    """``app`` on uvicorn at ``host``, its lifespan on (as ``--http`` runs it): its URL."""
    try:
        async with http_served(app, host, lifespan="on") as url:
            yield f"{url}/mcp"
    finally:
        app.close()


@asynccontextmanager
async def api_db(sidecar: Any, api: Api) -> AsyncIterator[Database]:
    bridge = OpenApiBridge([api_entry(api, include=INCLUDE)], Path("."))
    db = await Database.create(await bridge.load(), writes=False, sidecar=sidecar,
                               database=f"mcp_signin_{os.getpid()}_{id(api)}")
    try:
        yield db
    finally:
        await db.close()
        await bridge.aclose()


@asynccontextmanager
async def signed_client(url: str, authorization: str) -> AsyncIterator[Client]:
    """The SDK's client, sending ``authorization`` with every request."""
    async with create_mcp_http_client(headers={"Authorization": authorization}) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client


async def sql(client: Client, statement: str) -> tuple[str, bool]:
    result = await client.call_tool("execute_sql", {"sql": statement})
    return result.content[0].text, bool(result.is_error)


def tokens_sent(api: Api) -> list[str | None]:
    return [h.get("authorization") for _, p, _, h in api.rec.requests if p == "/secure/items"]


async def post(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INIT, headers={**MCP_HEADERS, **headers})


# -- with users ------------------------------------------------------------------------------


async def test_each_call_runs_as_the_user_it_signed_in_as(sidecar):
    async with api_served() as api, api_db(sidecar, api) as db, \
            mcp_served(http_app(db, host="0.0.0.0", users=users()), "0.0.0.0") as url:
        async with asyncio.timeout(60), signed_client(url, f"Bearer {ANN_TOKEN}") as ann:
            text, failed = await sql(ann, "SELECT n, label FROM t_secure_items")
            assert (text, failed) == ("SELECT 1\nn\tlabel\n1\titem 1", False)
            catalog = (await ann.read_resource(CATALOG_URI)).contents[0].text
            assert "t_list_things" in catalog and "t_secure_items" in catalog
        assert tokens_sent(api) == ["Bearer ann-token"]  # ann's role's token upstream

        async with asyncio.timeout(60), signed_client(url, basic("bob", BOB_PASSWORD)) as bob:
            text, failed = await sql(bob, "SELECT n FROM t_secure_items")
            assert (text, failed) == ("SELECT 1\nn\n1", False)
            text, failed = await sql(bob, "SELECT name FROM t_list_things WHERE id = 1")
            assert failed and text.startswith("ERROR 42P01"), text  # not his to see
            catalog = (await bob.read_resource(CATALOG_URI)).contents[0].text
            assert "t_secure_items" in catalog and "t_list_things" not in catalog
            tools = (await bob.list_tools()).tools
            assert tools[0].annotations is not None and tools[0].annotations.read_only_hint
            instructions = bob.instructions or ""  # one text for every user: no table in it
            assert CATALOG_URI in instructions and "t_list_things" not in instructions
        assert tokens_sent(api) == ["Bearer ann-token", "Bearer bob-token"]


@pytest.mark.parametrize("authorization", [
    None, "Bearer not-a-token-of-anyone", f"Bearer {ANN_TOKEN}x", basic("bob", "wrong"),
    basic("nobody", BOB_PASSWORD), basic("ann", ANN_TOKEN), "Basic !!!", "Digest x",
])
async def test_a_call_without_a_users_credentials_is_401(sidecar, authorization):
    async with api_served() as api, api_db(sidecar, api) as db, \
            mcp_served(http_app(db, host="0.0.0.0", users=users()), "0.0.0.0") as url:
        answer = await post(url, **({"Authorization": authorization} if authorization else {}))
        assert answer.status_code == 401, answer.text
        assert answer.headers.get_list("www-authenticate") == [
            'Bearer realm="glove-scratchpad"', 'Basic realm="glove-scratchpad", charset="UTF-8"']
        assert "mcp_token" in answer.json()["error_description"]
        assert ANN_TOKEN not in answer.text and BOB_PASSWORD not in answer.text
    assert tokens_sent(api) == []


async def test_a_session_is_its_users_alone(sidecar):
    async with api_served() as api, api_db(sidecar, api) as db, \
            mcp_served(http_app(db, host="127.0.0.1", users=users()), "127.0.0.1") as url:
        opened = await post(url, Authorization=f"Bearer {ANN_TOKEN}")
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        taken = await post(url, **{"Authorization": basic("bob", BOB_PASSWORD),
                                   "Mcp-Session-Id": session})
        assert taken.status_code == 404  # as if there were no such session
        again = await post(url, **{"Authorization": f"Bearer {ANN_TOKEN}",
                                   "Mcp-Session-Id": session})
        assert again.status_code != 404


# -- Host and Origin, on every address ---------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "0.0.0.0"])
async def test_a_foreign_host_or_origin_is_refused_on_every_address(sidecar, host):
    signed = users() if host != "127.0.0.1" else {}
    auth = {"Authorization": f"Bearer {ANN_TOKEN}"} if signed else {}
    async with api_served() as api, api_db(sidecar, api) as db, \
            mcp_served(http_app(db, host=host, users=signed,
                                allowed_hosts=["mcp.example.com"]), host) as url:
        port = url.split(":")[2].split("/")[0]
        assert (await post(url, **auth, Host="evil.example.com")).status_code == 421
        assert (await post(url, **auth, Host=f"evil.example.com:{port}")).status_code == 421
        assert (await post(url, **auth, Origin="http://evil.example.com")).status_code == 403
        assert (await post(url, **auth, Origin=f"http://127.0.0.1.evil.example.com:{port}")
                ).status_code == 403
        # Without credentials the Host is judged first: a rebinding page learns nothing.
        assert (await post(url, Host="evil.example.com")).status_code == 421
        # The names allowed: loopback's, the address listened on, and the configured.
        for name in ("localhost", "mcp.example.com", *([host] if host != "0.0.0.0" else [])):
            answer = await post(url, **auth, Host=f"{name}:{port}", Origin=f"https://{name}")
            assert answer.status_code == 200, (name, answer.text)


async def test_without_users_a_client_from_another_address_is_refused(sidecar):
    """Even bound to every address (which ``mcp --http`` refuses without users), the app
    serves loopback clients only, as ``serve`` does. The foreign client is the request's
    own address, handed to the app in process: no packet leaves loopback."""
    async with api_served() as api, api_db(sidecar, api) as db:
        app = http_app(db, host="0.0.0.0")
        async with mcp_served(app, "0.0.0.0") as url:
            foreign = httpx.ASGITransport(app=app, client=("203.0.113.5", 40000))
            async with httpx.AsyncClient(transport=foreign, timeout=30) as http:
                remote = await http.post("http://127.0.0.1/mcp", json=INIT,
                                         headers=MCP_HEADERS)
            assert remote.status_code == 403, remote.text
            assert (await post(url)).status_code == 200


# -- the command -------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.7"])
async def test_mcp_http_on_another_address_without_users_does_not_start(tmp_path, host):
    proc = await asyncio.create_subprocess_exec(
        *CLI, "--http", "--host", host, "--writes", "--sidecar-dir", str(tmp_path / "pg"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"glove-scratchpad: refusing to serve MCP over HTTP on {host} "
                               "without users"), lines
    assert "[users.NAME]" in lines[0]
    assert out == b"" and not (tmp_path / "pg").exists()  # nothing started


async def test_mcp_http_signs_in_the_configs_users(tmp_path):
    """The command with a config: users with a token from the environment or a password,
    bound to every address, an allowed host of the config's own."""
    token = "from-the-environment-0123456789"
    async with api_served() as api:
        config = tmp_path / "glove.toml"
        config.write_text(
            f'[server]\nsidecar_dir = "{tmp_path / "pg"}"\n'
            'mcp_allowed_hosts = ["mcp.example.com"]\n\n'
            f'[users.ann]\npassword = "{make_verifier("ann-pw")}"\n'
            'mcp_token = "${GLOVE_TEST_ANN_TOKEN}"\n\n'
            f'[users.bob]\npassword = "{make_verifier(BOB_PASSWORD)}"\n\n'
            f'[[openapi.apis]]\nnamespace = "t"\nspec = "{api.url}/openapi.json"\n'
            'include = ["secureItems"]\n'
            '[openapi.apis.roles.ann]\nheaders = { Authorization = "Bearer ann-token" }\n'
            '[openapi.apis.roles.bob]\nheaders = { Authorization = "Bearer bob-token" }\n')
        proc = await asyncio.create_subprocess_exec(
            *CLI, "--config", str(config), "--http", "--host", "0.0.0.0", "--port", "0",
            env={**os.environ, "GLOVE_TEST_ANN_TOKEN": token},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(60):
                banner = (await proc.stdout.readline()).decode()
            assert banner.startswith("glove-scratchpad MCP server on http://0.0.0.0:"), banner
            url = banner.split(" on ")[1].strip().replace("0.0.0.0", "127.0.0.1")
            assert (await post(url)).status_code == 401
            assert (await post(url, Authorization=f"Bearer {token}",
                               Host="evil.example.com")).status_code == 421
            port = url.split(":")[2].split("/")[0]
            assert (await post(url, Authorization=f"Bearer {token}",
                               Host=f"mcp.example.com:{port}")).status_code == 200
            async with asyncio.timeout(60):
                async with signed_client(url, f"Bearer {token}") as ann:
                    assert await sql(ann, "SELECT n FROM t_secure_items") == ("SELECT 1\nn\n1",
                                                                              False)
                async with signed_client(url, basic("bob", BOB_PASSWORD)) as bob:
                    assert await sql(bob, "SELECT n FROM t_secure_items") == ("SELECT 1\nn\n1",
                                                                              False)
        finally:
            proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert tokens_sent(api) == ["Bearer ann-token", "Bearer bob-token"]
    assert token not in err.decode() and BOB_PASSWORD not in err.decode()
    assert "Traceback" not in err.decode()


# -- the settings ------------------------------------------------------------------------------


def test_a_container_gives_its_user_a_token_and_its_hosts_by_the_environment():
    config = load_config(None, environ={
        "GLOVE_SCRATCHPAD_USER": "agent", "GLOVE_SCRATCHPAD_PASSWORD": "s3cret",
        "GLOVE_SCRATCHPAD_MCP_TOKEN": ANN_TOKEN,
        "GLOVE_SCRATCHPAD_MCP_ALLOWED_HOSTS": "mcp.example.com, 10.0.0.7:55433",
        "GLOVE_SCRATCHPAD_MCP_ALLOWED_ORIGINS": "https://app.example.com"})
    token = config.users["agent"].mcp_token
    assert token is not None and token.get_secret_value() == ANN_TOKEN
    assert ANN_TOKEN not in repr(config)  # never shown
    assert config.mcp_allowed_hosts == ["mcp.example.com", "10.0.0.7:55433"]
    assert config.mcp_allowed_origins == ["https://app.example.com"]
    with pytest.raises(ValueError, match="GLOVE_SCRATCHPAD_USER"):
        load_config(None, environ={"GLOVE_SCRATCHPAD_MCP_TOKEN": ANN_TOKEN})


@pytest.mark.parametrize(("token", "said"), [
    ("sk-short-123", "mcp_token is shorter than 16 characters"),
    ("${GLOVE_TEST_NOT_SET}", "the environment variable GLOVE_TEST_NOT_SET is not set"),
])
async def test_a_bad_token_stops_the_command_without_showing_it(tmp_path, token, said):
    config = tmp_path / "glove.toml"
    config.write_text(f'[users.ann]\npassword = "{make_verifier("ann-pw")}"\n'
                      f'mcp_token = "{token}"\n')
    proc = await asyncio.create_subprocess_exec(
        *CLI, "--config", str(config), "--http", "--host", "0.0.0.0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert said in err.decode() and "sk-short-123" not in err.decode()
    assert out == b""


def test_two_users_may_not_share_a_token():
    with pytest.raises(ValueError, match="same mcp_token"):
        check_listen("0.0.0.0", {"ann": users()["ann"], "eve": users()["ann"]})
