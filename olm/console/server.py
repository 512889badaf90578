"""The console's web server (aiohttp): routes, sessions, CSRF, headers; pages come from views.

Invariants:
- Every response carries the security headers of olm.console.security (a strict CSP).
- Every page but /login, /healthz and /static needs a session; its API calls use a gateway
  built from the session's token alone (olm.kube.bearer), never olm-py's own credentials.
- Every POST but /login checks the session's CSRF token; /login checks the pre-login cookie's.
  A missing or forged token is refused (403) before anything is read or written.
- `read_only`: every POST but /login and /logout is refused, and no action is offered.
- The blocking API calls run in worker threads; the event loop only routes and renders.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources

from aiohttp import web

from olm.console import pages, read
from olm.console.context import (
    CONSOLE,
    FIELD_MANAGER,
    SESSION,
    Console,
    call,
    console_of,
    refusal,
    respond,
    session_of,
    set_cookie,
)
from olm.console.security import (
    HEADERS,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    new_secret,
    same,
    valid_name,
)
from olm.kube.bearer import token_gateway
from olm.kube.errors import GatewayError

__all__ = ["Console", "application"]
OPEN_PATHS = ("/login", "/healthz", "/static/", "/favicon.ico")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        _secure(request, exc)
        raise
    _secure(request, response)
    return response


def _secure(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in HEADERS.items():
        if name == "Cache-Control" and request.path.startswith(("/static/", "/icons/")):
            response.headers[name] = "private, max-age=300"
        else:
            response.headers[name] = value
    icon_policy = response.headers.pop("X-Icon-Policy", None)
    if icon_policy:
        response.headers["Content-Security-Policy"] = icon_policy


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    console = console_of(request)
    if request.path.startswith(OPEN_PATHS):
        return await handler(request)
    session = console.sessions.get(request.cookies.get(SESSION_COOKIE))
    if session is None:
        if request.method == "POST":
            return web.Response(text="sign in first", status=403)
        raise web.HTTPSeeOther("/login")
    request[SESSION] = session
    if not all(valid_name(v) for v in request.match_info.values()):
        return web.Response(text="not a Kubernetes object name", status=400)
    if request.method == "POST":
        form = await request.post()
        if not same(str(form.get("csrf") or ""), session.csrf):
            return web.Response(text="forged or missing CSRF token: reload the page", status=403)
        if console.read_only and request.path != "/logout":
            return web.Response(text="the console is read-only", status=403)
    try:
        return await handler(request)
    except GatewayError as exc:
        if exc.status == 401:
            console.sessions.end(request.cookies.get(SESSION_COOKIE))
            raise web.HTTPSeeOther("/login") from exc
        return respond(
            request,
            "error.html",
            403 if exc.status == 403 else 502,
            title="Refused",
            error=refusal(exc),
        )


# ----- sign-in ------------------------------------------------------------------------------


async def login_page(request: web.Request) -> web.Response:
    console = console_of(request)
    code = request.query.get("code")
    if code:
        redeemed = console.sessions.redeem(code)
        if redeemed is None:
            return respond(
                request,
                "error.html",
                403,
                title="Sign-in link expired",
                error="This sign-in link was used or has expired; run olm console again.",
            )
        return await _sign_in(request, *redeemed)
    # Reuse the pre-login secret of this browser: a second tab (or a stray request) must not
    # invalidate the form already shown.
    secret = request.cookies.get(LOGIN_COOKIE) or new_secret()
    response = respond(
        request, "login.html", login_csrf=secret, namespace=console.default_namespace
    )
    set_cookie(response, console, LOGIN_COOKIE, secret, 600)
    return response


async def login(request: web.Request) -> web.Response:
    console = console_of(request)
    form = await request.post()
    if not same(str(form.get("csrf") or ""), request.cookies.get(LOGIN_COOKIE, "")):
        return web.Response(
            text="forged or missing CSRF token: reload the sign-in page", status=403
        )
    token = str(form.get("token") or "").strip()
    namespace = str(form.get("namespace") or console.default_namespace).strip()
    if not valid_name(namespace):
        namespace = console.default_namespace
    if not token:
        return respond(
            request,
            "login.html",
            400,
            login_csrf=request.cookies.get(LOGIN_COOKIE, ""),
            namespace=namespace,
            error="Paste a bearer token.",
        )
    return await _sign_in(request, token, namespace)


async def _sign_in(request: web.Request, token: str, namespace: str) -> web.Response:
    console = console_of(request)
    gateway = token_gateway(console.cluster, token, FIELD_MANAGER)
    try:
        user = await call(read.whoami, gateway)
    except GatewayError as exc:
        words = "the API server did not accept this token" if exc.status == 401 else str(exc)
        secret = new_secret()
        response = respond(
            request,
            "login.html",
            403,
            login_csrf=secret,
            namespace=namespace,
            error=f"Not signed in: {words}.",
        )
        set_cookie(response, console, LOGIN_COOKIE, secret, 600)
        return response
    session_id, _ = console.sessions.start(token, namespace or "default", user)
    response = web.HTTPSeeOther("/catalog")
    set_cookie(response, console, SESSION_COOKIE, session_id, None)
    response.del_cookie(LOGIN_COOKIE, path="/")
    raise response


async def logout(request: web.Request) -> web.Response:
    console = console_of(request)
    session = session_of(request)
    console.gateways.pop(session.fingerprint, None)
    console.sessions.end(request.cookies.get(SESSION_COOKIE))
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    raise response


async def healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


async def favicon(_: web.Request) -> web.Response:
    return web.Response(status=204)


async def root(_: web.Request) -> web.Response:
    raise web.HTTPSeeOther("/catalog")


def application(console: Console) -> web.Application:
    app = web.Application(middlewares=[headers, guard], client_max_size=2 * 1024 * 1024)
    app[CONSOLE] = console
    static = resources.files("olm.console") / "static"
    app.add_routes(
        [
            web.get("/", root),
            web.get("/healthz", healthz),
            web.get("/favicon.ico", favicon),
            web.get("/login", login_page),
            web.post("/login", login),
            web.post("/logout", logout),
            web.get("/catalog", pages.catalog_page),
            web.get("/packages/{catalog_ns}/{catalog}/{name}", pages.package_page),
            web.get("/icons/{catalog_ns}/{name}", pages.icon),
            web.post("/install", pages.install_post),
            web.get("/operators", pages.operators_page),
            web.get("/operators/{namespace}/{name}", pages.operator_page),
            web.get("/plans/{namespace}/{name}", pages.plan_page),
            web.post("/plans/{namespace}/{name}/approve", pages.approve_post),
            web.get("/operands/{namespace}/{name}/{kind}/new", pages.operand_form),
            web.post("/operands/{namespace}/{name}/{kind}", pages.operand_post),
            web.get("/uninstall/{namespace}/{package}", pages.uninstall_page),
            web.post("/uninstall/{namespace}/{package}", pages.uninstall_post),
            web.static("/static", str(static)),
        ]
    )
    return app
