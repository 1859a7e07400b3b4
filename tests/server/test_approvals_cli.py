"""``glove-scratchpad approvals list | show | approve | deny`` against a running server:
the same decisions as through SQL, and the same refusal (42501) for an agent role."""

from __future__ import annotations

import asyncio
import json
import sys
from urllib.parse import urlparse

import psycopg
import pytest

from ..approvals.fix_approvals import connect, pending, served

CLI = [sys.executable, "-m", "glove_scratchpad.server.cli", "approvals"]


async def _cli(dsn: str, *args: str) -> tuple[int, str, str]:
    port = str(urlparse(dsn).port)
    user = urlparse(dsn).username or ""
    proc = await asyncio.create_subprocess_exec(
        *CLI, *args, "--port", port, "--user", user, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def _commit(dsn: str, notices: list[str]) -> None:
    async with await connect(dsn, notices) as conn:
        await conn.execute("BEGIN")
        await conn.execute("INSERT INTO emails (to_addr, body) VALUES ('c@x', 'by cli')")
        await conn.execute("COMMIT")


async def test_list_show_and_approve_from_the_command_line(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        notices: list[str] = []
        committing = asyncio.ensure_future(_commit(dsn("agent"), notices))
        rid = await pending(dsn("ops"))
        code, out, _ = await _cli(dsn("ops"), "list")
        assert code == 0 and out.startswith(f"{rid}\tpending\tagent\t")
        code, out, _ = await _cli(dsn("ops"), "show", str(rid))
        shown = json.loads(out)
        assert shown["writes"][0]["rows"][0]["body"] == "by cli"
        code, out, err = await _cli(dsn("agent"), "approve", str(rid), "-m", "self")
        assert code == 1 and "42501" in err and "not an approver" in err
        assert sent.emails == [] and not committing.done()
        code, out, err = await _cli(dsn("ops"), "approve", str(rid), "-m", "from the shell")
        assert code == 0, err
        await asyncio.wait_for(committing, 20)
        assert [e["body"] for e in sent.emails] == ["by cli"]
        assert any("approved by ops" in n for n in notices)


async def test_deny_from_the_command_line(sidecar):
    async with served(sidecar) as (_db, sent, dsn):
        committing = asyncio.ensure_future(_commit(dsn("agent"), []))
        rid = await pending(dsn("ops"))
        code, _, err = await _cli(dsn("ops"), "deny", str(rid), "-m", "wrong recipient")
        assert code == 0, err
        with pytest.raises(psycopg.Error) as caught:
            await asyncio.wait_for(committing, 20)
        assert caught.value.sqlstate == "38003"
        assert "wrong recipient" in str(caught.value)
        assert sent.emails == []
