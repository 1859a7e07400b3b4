"""The console's pages and buttons: a Starlette app of server-rendered HTML.

Rules:
- Every page needs a signed-in session (``signin``), but the sign-in page and the
  static files; without one, a page redirects to sign-in and a button is refused.
- Every state change is a POST carrying the form's CSRF token (the session's, or for
  signing in, the one of a cookie set with the form): without it, 403 and nothing
  happens. A POST whose Origin is not the console's own is refused the same way.
- A button does what one SQL statement does (``reads``), then redirects to a page
  (POST, redirect, GET) that shows the outcome once: the server's notices, or its
  error with SQLSTATE and hint.
- Every response carries a strict Content-Security-Policy (the console's own script
  and style files, no inline script, no other origin, no frames), nosniff, a referrer
  for its own pages alone (so a form's Origin is sent), and no caching. Templates
  escape every value (jinja2 autoescape), and no value from the data is ever put in
  an attribute that links or loads anything.
- A Host header that names neither loopback nor the console's address is refused
  (421) while it listens on one address (DNS rebinding).
"""

from __future__ import annotations

import datetime as dt
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from glove_scratchpad import errors

from .reads import CALLS_SHOWN, Reads, Refused
from .signin import ConsoleSession, SignInFailed, Signins

__all__ = ["COOKIE", "SIGNIN_COOKIE", "console_app"]

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
COOKIE = "glove_console"  # the signed-in session's token
SIGNIN_COOKIE = "glove_console_signin"  # the sign-in form's CSRF token
MAX_COMMENT = 2000  # characters of an approver's comment or reason
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store", "Cross-Origin-Opener-Policy": "same-origin"}
LOOPBACK_NAMES = ("localhost",)


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["when"] = _when
    env.filters["columns"] = lambda rows: list(dict.fromkeys(k for r in rows for k in r))
    env.filters["without"] = lambda d, *keys: {k: v for k, v in d.items() if k not in keys}
    env.tests["mapping"] = lambda v: isinstance(v, dict)
    env.tests["rows"] = lambda v: (isinstance(v, list) and bool(v)
                                   and all(isinstance(x, dict) for x in v))
    env.tests["seq"] = lambda v: isinstance(v, list)
    return env


def _when(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if value is None else str(value)


class Guard:
    """The headers every response carries, and the Host check, around the app."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] | None) -> None:
        self.app = app
        self.hosts = hosts  # None: listening everywhere, any Host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if self.hosts is not None and not _host_allowed(host, self.hosts):
            reply = PlainTextResponse("the console answers at its own address\n", 421,
                                      headers=HEADERS)
            await reply(scope, receive, send)
            return

        async def secured(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.decode("latin-1").lower() not in _LOWER_HEADERS]
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, secured)


_LOWER_HEADERS = {k.lower() for k in HEADERS}


def _host_allowed(header: str, hosts: tuple[str, ...]) -> bool:
    name = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    name = name.strip("[]").lower()
    if name in LOOPBACK_NAMES or name in hosts:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def console_app(signins: Signins, schema: str, *, listen_host: str | None) -> ASGIApp:
    """The console over ``signins``, reading the views of ``schema`` (the server's
    system schema); ``listen_host``: its one address (None: every one)."""
    env = _templates()
    reads = Reads(schema)

    def page(request: Request, name: str, session: ConsoleSession | None, status: int = 200,
             **values: Any) -> HTMLResponse:
        said = values.pop("flash", [])
        html = env.get_template(name).render(
            user=session.user if session else None, csrf=session.csrf if session else "",
            flash=[*said, *session.take_flash()] if session else said,
            path=request.url.path, **values)
        return HTMLResponse(html, status)

    def signed(handler: Callable[[Request, ConsoleSession], Awaitable[Response]]
               ) -> Callable[[Request], Awaitable[Response]]:
        """A page or button of a signed-in session; a button checks the CSRF token."""

        async def endpoint(request: Request) -> Response:
            session = await signins.find(request.cookies.get(COOKIE))
            if request.method == "POST":
                form = await request.form()
                token = str(form.get("csrf") or "")
                if (session is None or not _same_origin(request)
                        or not hmac.compare_digest(token.encode(), session.csrf.encode())):
                    return _refused(request, env)
                request.state.form = form
            elif session is None:
                return RedirectResponse("/sign-in", 303)
            async with session.lock:
                try:
                    return await handler(request, session)
                except Refused as exc:
                    return page(request, "refused.html", session, 200, error=exc)
                except (asyncpg.InterfaceError, OSError):
                    pass  # the server closed the connection: sign in again
            await signins.sign_out(session)
            return RedirectResponse("/sign-in", 303)

        return endpoint

    async def sign_in_form(request: Request) -> Response:
        token = secrets.token_urlsafe(32)
        reply = page(request, "signin.html", None, csrf_signin=token, flash=[])
        reply.set_cookie(SIGNIN_COOKIE, token, httponly=True, samesite="strict", path="/")
        return reply

    async def sign_in(request: Request) -> Response:
        form = await request.form()
        token = str(form.get("csrf") or "")
        expected = request.cookies.get(SIGNIN_COOKIE) or ""
        if not (expected and _same_origin(request)
                and hmac.compare_digest(token.encode(), expected.encode())):
            return _refused(request, env)
        user, password = str(form.get("user") or ""), str(form.get("password") or "")
        try:
            session = await signins.sign_in(user, password)
        except SignInFailed as exc:
            again = secrets.token_urlsafe(32)
            failed = page(request, "signin.html", None, 401, csrf_signin=again,
                          flash=[("error", str(exc))], last_user=user)
            failed.set_cookie(SIGNIN_COOKIE, again, httponly=True, samesite="strict",
                              path="/")
            return failed
        log.info("console: %s signed in", user)
        reply = RedirectResponse("/", 303)
        reply.set_cookie(COOKIE, session.token, httponly=True, samesite="strict", path="/")
        reply.delete_cookie(SIGNIN_COOKIE, path="/", httponly=True, samesite="strict")
        return reply

    async def sign_out(request: Request, session: ConsoleSession) -> Response:
        await signins.sign_out(session)
        reply = RedirectResponse("/sign-in", 303)
        reply.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return reply

    async def approvals_page(request: Request, session: ConsoleSession) -> Response:
        missing = None
        try:
            listed = await reads.approvals(session.conn)
        except Refused as exc:
            if exc.sqlstate != errors.UndefinedTable.sqlstate:
                raise
            listed, missing = [], exc  # this server gates no write: it has no such view
        return page(request, "approvals.html", session, requests=listed, missing=missing,
                    refresh=True)

    async def approval_page(request: Request, session: ConsoleSession) -> Response:
        number = _number(request.path_params["id"])
        found = None if number is None else await reads.approval(session.conn, number)
        if found is None:
            return page(request, "notfound.html", session, 404,
                        what=f"No request {request.path_params['id']} that you may see.")
        return page(request, "approval.html", session, request_=found)

    async def decide(request: Request, session: ConsoleSession) -> Response:
        number = _number(request.path_params["id"])
        if number is None or request.path_params["verb"] not in ("approve", "deny"):
            return page(request, "notfound.html", session, 404, what="No such request.")
        approve = request.path_params["verb"] == "approve"
        comment = str(request.state.form.get("comment") or "")[:MAX_COMMENT]
        notices: list[str] = []
        try:
            said = await reads.decide(session.conn, number, approve, comment, notices)
        except Refused as exc:
            session.say("error", str(exc))
        else:  # the server's own words: what fired, or who waits for it
            session.say("ok", str(said) if said is not None
                        else f"Request {number} {'approved' if approve else 'denied'}.")
        for notice in notices:
            session.say("notice", notice)
        return RedirectResponse(f"/approvals/{number}", 303)

    async def activity_page(request: Request, session: ConsoleSession) -> Response:
        rows = await reads.activity(session.conn)
        own = session.conn.get_server_pid()
        return page(request, "activity.html", session, sessions=rows, own_pid=own,
                    refresh=True)

    async def cancel(request: Request, session: ConsoleSession) -> Response:
        pid = _number(request.path_params["pid"])
        notices: list[str] = []
        if pid is not None:
            try:
                done = await reads.cancel(session.conn, pid, notices)
            except Refused as exc:
                session.say("error", str(exc))
            else:
                session.say("ok" if done else "notice",
                            f"Statement of session {pid} cancelled." if done
                            else f"Session {pid} was running no statement.")
        for notice in notices:
            session.say("notice", notice)
        return RedirectResponse("/activity", 303)

    async def calls_page(request: Request, session: ConsoleSession) -> Response:
        return page(request, "calls.html", session, calls=await reads.calls(session.conn),
                    shown=CALLS_SHOWN, refresh=True)

    async def resources_page(request: Request, session: ConsoleSession) -> Response:
        return page(request, "resources.html", session,
                    resources=await reads.resources(session.conn))

    routes = [
        Route("/", signed(approvals_page)),
        Route("/sign-in", sign_in_form, methods=["GET"]),
        Route("/sign-in", sign_in, methods=["POST"]),
        Route("/sign-out", signed(sign_out), methods=["POST"]),
        Route("/approvals/{id}", signed(approval_page)),
        Route("/approvals/{id}/{verb:str}", signed(decide), methods=["POST"]),
        Route("/activity", signed(activity_page)),
        Route("/activity/{pid}/cancel", signed(cancel), methods=["POST"]),
        Route("/calls", signed(calls_page)),
        Route("/resources", signed(resources_page)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("not found\n", 404)

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
    return Guard(app, None if listen_host is None else (listen_host.lower(),))


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 19 else None


def _same_origin(request: Request) -> bool:
    """No Origin (an old browser, a script), or the console's own."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()


def _refused(request: Request, env: jinja2.Environment) -> Response:
    log.warning("console: refused a %s to %s without its CSRF token", request.method,
                request.url.path)
    html = env.get_template("csrf.html").render(user=None, csrf="", flash=[],
                                                path=request.url.path)
    return HTMLResponse(html, 403)
