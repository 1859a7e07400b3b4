"""One MCP server's connection: a session started on first use, and again after a failure.

Rules:

- One session at a time, started under a lock: callers that wait for a start
  that fails all get its verdict, rather than each starting the server again.
- A failure of the transport (the process exits, the HTTP server goes away,
  the server no longer knows the session) marks the session broken and fails
  the call with ``McpServerUnavailable``; the next call starts a new session.
- Only a call without side effects (``retry=True``: a read-only tool) is
  retried, once, on a new session: a call cut off by a lost connection may
  have run.
- A tool's own failure (an error result, invalid arguments, a timeout) is
  ``McpToolError`` and leaves the session alone.
- A ``write`` call that was sent and got no answer (no answer within
  ``timeout``, the session lost while it was pending: ``sent_unanswered``) is
  08007: it may have run. One that could not be sent is a failure as any other.
- After ``aclose`` every call fails as unreachable.
- An answer longer than ``max_message_bytes`` fails its call (``McpToolError``),
  and is not retried: the server was stopped, and the next call starts it again.
- A result is checked against the tool's ``outputSchema`` here (``_check``), off
  the event loop and with no pattern that backtracks, not by the SDK.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, cast

import anyio
import httpx2
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    Tool,
)

from glove_scratchpad import traces
from glove_scratchpad.errors import InvalidParameterValue, SqlError, TransactionResolutionUnknown

from ._check import Mismatch, OutputCheck
from ._config import McpServerConfig
from ._errors import McpServerError, McpServerUnavailable, McpToolError
from ._session import LiveSession, failure_reason, innermost, is_disconnect, session_lost

__all__ = ["McpConnection", "sent_unanswered"]

# What fails a call before its request is handed on, so the server cannot have seen it:
# our end of the session's streams closed, or the transport's gone (anyio raises these on
# a send, not on a receive), or an HTTP server that could not be reached.
_NOT_SENT = (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionRefusedError,
             httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)


def sent_unanswered(exc: BaseException) -> bool:
    """Whether a call that failed so may have run with no answer to tell: no answer within
    the timeout (REQUEST_TIMEOUT), or the session lost while the call was pending (its
    stream ended, the process died, an HTTP read or reset), unless the request could not
    even be handed on (``_NOT_SENT``). A tool's own error, or a refusal, was an answer."""
    leaf = innermost(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == REQUEST_TIMEOUT or is_disconnect(leaf)
    return is_disconnect(leaf) and not isinstance(leaf, _NOT_SENT)


class McpConnection:
    """One MCP server's session, started on first use and again after a failure.

    Every call goes through the same session; when it fails (the process
    exits, the HTTP server goes away), the call fails with
    ``McpServerUnavailable`` and the next one starts a new session. A
    read-only call that finds the session gone is retried once on a new one.
    """

    def __init__(self, config: McpServerConfig | Mapping[str, Any]) -> None:
        self.config = (
            config
            if isinstance(config, McpServerConfig)
            else McpServerConfig.model_validate(config)
        )
        self._session: LiveSession | None = None
        self._lock = asyncio.Lock()
        self._attempts = 0
        self._last_failure: tuple[str, str | None] | None = None
        self._closed = False
        self._checks: dict[str, OutputCheck] = {}  # tool -> its outputSchema's check

    @property
    def namespace(self) -> str:
        return self.config.namespace

    async def connect(self) -> None:
        """Start the session now, rather than on first use."""
        await self._live()

    async def _live(self) -> LiveSession:
        if self._closed:
            raise McpServerUnavailable(self.namespace, "its connection was closed")
        session = self._session
        if session is not None and not session.broken:
            return session
        attempts = self._attempts
        async with self._lock:
            if self._closed:
                raise McpServerUnavailable(self.namespace, "its connection was closed")
            session = self._session
            if session is not None and not session.broken:
                return session
            if self._attempts != attempts and self._last_failure is not None:
                # A start this caller waited for has just failed: share its verdict.
                raise McpServerUnavailable(
                    self.namespace, self._last_failure[0], detail=self._last_failure[1]
                )
            self._session = None
            if session is not None:
                await session.close()
            self._attempts += 1
            fresh = LiveSession(self.config)
            try:
                await fresh.start()
            except Exception as exc:
                error = self._unavailable(exc, fresh, starting=True)
                self._last_failure = (error.reason, error.detail)
                raise error from None
            self._last_failure = None
            self._session = fresh
            return fresh

    def _unavailable(
        self, exc: BaseException, session: LiveSession, *, starting: bool
    ) -> McpServerUnavailable:
        cause = session.failure if session.failure is not None else exc
        if session.refused is not None:
            reason = str(session.refused)
        else:
            reason = failure_reason(cause, self.config, starting=starting)
        return McpServerUnavailable(self.namespace, reason, detail=session.stderr_detail())

    async def list_tools(self) -> list[Tool]:
        """Every tool of the server, all pages."""
        session = await self._live()
        client = cast(Client, session.client)
        tools: list[Tool] = []
        cursor: str | None = None
        try:
            for _ in range(1000):
                with anyio.fail_after(self.config.startup_timeout):
                    page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:
            if is_disconnect(exc):
                session.broken = True
                raise self._unavailable(exc, session, starting=False) from None
            if isinstance(innermost(exc), TimeoutError):
                raise McpServerUnavailable(
                    self.namespace,
                    f"it did not list its tools within {self.config.startup_timeout:g} s",
                ) from None
            raise McpServerError(
                self.namespace,
                f'MCP server "{self.namespace}" could not list its tools: {innermost(exc)}',
                hint="Check that the server offers tools.",
            ) from None
        self._checks = {t.name: OutputCheck(t.output_schema) for t in tools if t.output_schema}
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        table: str = "",
        retry: bool = False,
        write: bool = False,
    ) -> CallToolResult:
        """Call one tool; ``retry``: retry once on a new session if the session was lost.

        Only a call without side effects may be retried: a call cut off by a
        lost connection may have run. A ``write`` cut off so is 08007.
        """
        for attempt in (1, 2):
            session = await self._live()
            client = cast(Client, session.client)
            try:
                with traces.mcp_request("tools/call", name):
                    # Not client.call_tool: the SDK checks the outputSchema on the event loop,
                    # with re. The check is ours, below.
                    result = await client.session.send_request(
                        CallToolRequest(
                            params=CallToolRequestParams(name=name, arguments=dict(arguments))
                        ),
                        CallToolResult,
                        request_read_timeout_seconds=self.config.timeout,
                    )
            except Exception as exc:
                if session.refused is not None and not write:
                    session.broken = True
                    raise self._too_large(name, table, session) from None
                if write and sent_unanswered(exc):
                    session.broken = session.broken or is_disconnect(exc)
                    raise self._in_doubt(name, exc, session) from None
                if is_disconnect(exc):
                    error = self._unavailable(exc, session, starting=False)
                elif await session_lost(client, exc):
                    leaf = cast(MCPError, innermost(exc))
                    error = McpServerUnavailable(
                        self.namespace,
                        f"it no longer answers this session ({leaf.message}); it may have"
                        " restarted",
                    )
                else:
                    raise self._call_error(name, table, exc) from None
                session.broken = True
                if retry and attempt == 1:
                    continue
                raise error from None
            await self._check(name, table, result)
            return result
        raise AssertionError("unreachable")

    async def _check(self, tool: str, table: str, result: CallToolResult) -> None:
        """A result against its tool's outputSchema (``McpToolError`` when it does not fit)."""
        check = self._checks.get(tool)
        if check is None or result.is_error:
            return
        content = result.structured_content
        problem: str | None = None
        detail = None
        if content is None and "structured_content" not in result.model_fields_set:
            problem = "it declares an outputSchema but gave no structured content"
        else:
            try:
                mismatch = await check.check(content, within=self.config.timeout)
            except Mismatch as exc:
                problem = str(exc)
            else:
                if mismatch is not None:
                    problem = f"its answer does not match its outputSchema at {mismatch[0]}"
                    detail = (
                        "The check found (quoting the server's answer, untrusted):"
                        f" {mismatch[1]}"
                    )
        if problem is not None:
            raise McpToolError(
                self.namespace,
                tool,
                table,
                problem,
                detail=detail,
                hint="The server answered outside the schema it declares, so its rows are not"
                " read. Fix the server, or leave the tool out (exclude) in the configuration.",
            )

    def _too_large(self, tool: str, table: str, session: LiveSession) -> SqlError:
        limit = self.config.max_message_bytes
        return McpToolError(
            self.namespace,
            tool,
            table,
            f"its answer is longer than max_message_bytes ({limit} bytes)",
            detail=session.stderr_detail(),
            hint="Ask for less (narrower WHERE values, or a LIMIT), or raise max_message_bytes"
            f' of MCP server "{self.namespace}" in the configuration. The server was stopped;'
            " the next query that needs it starts it again.",
        )

    def _in_doubt(self, tool: str, exc: BaseException, session: LiveSession) -> SqlError:
        """A write call sent and not answered (``sent_unanswered``): 08007."""
        leaf = innermost(exc)
        detail = None
        if isinstance(leaf, MCPError) and leaf.code == REQUEST_TIMEOUT:
            why = f"no answer came within {self.config.timeout:g} s"
        else:
            lost = self._unavailable(exc, session, starting=False)
            why, detail = f"{lost.reason} before answering", lost.detail
        return TransactionResolutionUnknown(
            f'MCP tool "{tool}" of server "{self.namespace}": the call was sent and {why},'
            " so the write may have happened",
            detail=detail,
            hint="Its outcome is unknown: read the table to see whether it took effect"
            " before sending it again.",
        )

    def _call_error(self, tool: str, table: str, exc: BaseException) -> SqlError:
        leaf = innermost(exc)
        if isinstance(leaf, MCPError):
            if leaf.code == REQUEST_TIMEOUT:
                return McpToolError(
                    self.namespace,
                    tool,
                    table,
                    f"no answer within {self.config.timeout:g} s",
                    hint="The tool may still be running. Try again, or raise the"
                    " server's timeout in the configuration.",
                )
            if leaf.code == INVALID_PARAMS:
                error = McpToolError(
                    self.namespace,
                    tool,
                    table,
                    f"invalid arguments: {leaf.message}",
                    detail=json.dumps(leaf.data, default=str)[:1000]
                    if leaf.data is not None
                    else None,
                )
                error.sqlstate = InvalidParameterValue.sqlstate  # type: ignore[misc]
                return error
            if leaf.code == METHOD_NOT_FOUND:
                return McpToolError(
                    self.namespace,
                    tool,
                    table,
                    leaf.message,
                    hint="The server no longer offers this tool; restart the"
                    " bridge to re-read its tools.",
                )
            return McpToolError(self.namespace, tool, table, f"{leaf.message} (code {leaf.code})")
        return McpToolError(self.namespace, tool, table, f"{type(leaf).__name__}: {leaf}")

    async def aclose(self) -> None:
        """End the session (stopping a stdio server); later calls fail as unreachable."""
        self._closed = True
        async with self._lock:
            session, self._session = self._session, None
            if session is not None:
                await session.close()

    async def __aenter__(self) -> McpConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
