"""The HTTP client of a streamable HTTP MCP server, whose every message is budgeted.

The SDK reads a JSON answer to a POST whole, however long it is, and bounds
an SSE event at 1 MiB whatever the server's setting. Here a JSON answer is
counted as it arrives and refused past ``max_message_bytes`` before more of it
is held (``MessageTooLarge`` handed to ``refused``, so that the call that waited
fails saying why); the SSE events' bound is the same setting, given to the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx2

from ._stdio import MessageTooLarge

__all__ = ["bounded_http_client"]


class _TooLong(httpx2.StreamError):
    """A JSON answer past the limit: the SDK fails the request it answers with it."""


class _Counted(httpx2.AsyncByteStream):
    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, refused: Callable[[MessageTooLarge], None]
    ) -> None:
        self.inner, self.limit, self.refused = inner, limit, refused

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > self.limit:
                error = MessageTooLarge(self.limit)
                self.refused(error)
                raise _TooLong(str(error))
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Bounded(httpx2.AsyncBaseTransport):
    def __init__(self, limit: int, refused: Callable[[MessageTooLarge], None]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.limit, self.refused = limit, refused

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind == "application/json" and isinstance(response.stream, httpx2.AsyncByteStream):
            response.stream = _Counted(response.stream, self.limit, self.refused)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def bounded_http_client(
    headers: dict[str, str], *, max_message_bytes: int, refused: Callable[[MessageTooLarge], None]
) -> httpx2.AsyncClient:
    """An HTTP client for one server whose JSON answers stop at ``max_message_bytes``."""
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(30.0, read=300.0),
        transport=_Bounded(max_message_bytes, refused),
    )
