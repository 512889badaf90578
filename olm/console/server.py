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

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from aiohttp import web

from olm.api.kinds import Kind
from olm.console import catalog, install, operands, operators, read, views
from olm.console.security import (
    HEADERS,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    Session,
    Sessions,
    cookie_attributes,
    new_secret,
    same,
)
from olm.kube.bearer import Cluster, token_gateway
from olm.kube.errors import GatewayError, NotFound
from olm.planshow.run import PlanShowError
from olm.preview.render import FLAG_WORDS
from olm.preview.render import lines as preview_lines
from olm.uninstall.run import UninstallError

log = logging.getLogger("olm.console")
FIELD_MANAGER = "olm-py-console"
OPEN_PATHS = ("/login", "/healthz", "/static/", "/favicon.ico")
CARDS_SHOWN = 300
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Console:
    cluster: Cluster
    read_only: bool = False
    secure_cookies: bool = False
    default_namespace: str = "default"
    sessions: Sessions = field(default_factory=Sessions)
    gateways: dict[str, Any] = field(default_factory=dict)

    def gateway(self, session: Session) -> Any:
        """The user's gateway (one connection pool per token)."""
        key = session.fingerprint
        if key not in self.gateways:
            self.gateways[key] = token_gateway(self.cluster, session.token, FIELD_MANAGER)
        return self.gateways[key]


CONSOLE = web.AppKey("console", Console)
SESSION = web.RequestKey("session", Session)


def _console(request: web.Request) -> Console:
    return request.app[CONSOLE]


def _session(request: web.Request) -> Session:
    return request[SESSION]


def _page(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    session = request.get(SESSION)
    html = views.page(
        template,
        session=session,
        csrf=session.csrf if session else "",
        read_only=_console(request).read_only,
        **context,
    )
    return web.Response(text=html, content_type="text/html", status=status)


def _set_cookie(
    response: web.StreamResponse, console: Console, name: str, value: str, max_age: int | None
) -> None:
    """A cookie of the console: HttpOnly, SameSite=Strict, Secure when served over HTTPS."""
    attributes = cookie_attributes(console.secure_cookies)
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=str(attributes["path"]),
        httponly=bool(attributes["httponly"]),
        samesite=str(attributes["samesite"]),
        secure=bool(attributes["secure"]),
    )


def _refusal(exc: GatewayError) -> str:
    if exc.status == 403:
        return f"Kubernetes refused this as you: {exc}"
    return f"The API server answered: {exc}"


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
    console = _console(request)
    if request.path.startswith(OPEN_PATHS):
        return await handler(request)
    session = console.sessions.get(request.cookies.get(SESSION_COOKIE))
    if session is None:
        if request.method == "POST":
            return web.Response(text="sign in first", status=403)
        raise web.HTTPSeeOther("/login")
    request[SESSION] = session
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
        return _page(
            request,
            "error.html",
            403 if exc.status == 403 else 502,
            title="Refused",
            error=_refusal(exc),
        )


async def _call(function: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(function, *args)


# ----- sign-in ------------------------------------------------------------------------------


async def login_page(request: web.Request) -> web.Response:
    console = _console(request)
    code = request.query.get("code")
    if code:
        redeemed = console.sessions.redeem(code)
        if redeemed is None:
            return _page(
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
    response = _page(request, "login.html", login_csrf=secret, namespace=console.default_namespace)
    _set_cookie(response, console, LOGIN_COOKIE, secret, 600)
    return response


async def login(request: web.Request) -> web.Response:
    console = _console(request)
    form = await request.post()
    if not same(str(form.get("csrf") or ""), request.cookies.get(LOGIN_COOKIE, "")):
        return web.Response(
            text="forged or missing CSRF token: reload the sign-in page", status=403
        )
    token = str(form.get("token") or "").strip()
    namespace = str(form.get("namespace") or console.default_namespace).strip()
    if not token:
        return _page(
            request,
            "login.html",
            400,
            login_csrf=request.cookies.get(LOGIN_COOKIE, ""),
            namespace=namespace,
            error="Paste a bearer token.",
        )
    return await _sign_in(request, token, namespace)


async def _sign_in(request: web.Request, token: str, namespace: str) -> web.Response:
    console = _console(request)
    gateway = token_gateway(console.cluster, token, FIELD_MANAGER)
    try:
        user = await _call(read.whoami, gateway)
    except GatewayError as exc:
        words = "the API server did not accept this token" if exc.status == 401 else str(exc)
        secret = new_secret()
        response = _page(
            request,
            "login.html",
            403,
            login_csrf=secret,
            namespace=namespace,
            error=f"Not signed in: {words}.",
        )
        _set_cookie(response, console, LOGIN_COOKIE, secret, 600)
        return response
    session_id, _ = console.sessions.start(token, namespace or "default", user)
    response = web.HTTPSeeOther("/catalog")
    _set_cookie(response, console, SESSION_COOKIE, session_id, None)
    response.del_cookie(LOGIN_COOKIE, path="/")
    raise response


async def logout(request: web.Request) -> web.Response:
    console = _console(request)
    session = _session(request)
    console.gateways.pop(session.fingerprint, None)
    console.sessions.end(request.cookies.get(SESSION_COOKIE))
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    raise response


# ----- catalog ------------------------------------------------------------------------------


async def catalog_page(request: web.Request) -> web.Response:
    session = _session(request)
    gateway = _console(request).gateway(session)
    manifests = await _call(read.package_manifests, gateway, session.namespace)
    filters = catalog.Filters.from_query(request.query)
    cards, facets = catalog.browse(manifests, filters)
    return _page(
        request,
        "catalog.html",
        cards=cards,
        facets=facets,
        filters=filters,
        total=len(manifests),
        shown=CARDS_SHOWN,
    )


async def package_page(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    info = request.match_info
    manifest = await _call(
        read.package_manifest,
        gateway,
        session.namespace,
        info["catalog_ns"],
        info["catalog"],
        info["name"],
    )
    if manifest is None:
        return _page(
            request,
            "error.html",
            404,
            title="No such package",
            error=f"No package {info['name']} in catalog {info['catalog_ns']}/{info['catalog']}.",
        )
    can_install = await _call(
        read.allowed,
        gateway,
        session,
        "create",
        "operators.coreos.com",
        "subscriptions",
        session.namespace,
    )
    return _page(
        request,
        "package.html",
        card=catalog.card(manifest),
        selected=request.query.get("channel"),
        can_install=can_install,
        namespace=session.namespace,
    )


async def icon(request: web.Request) -> web.Response:
    session = _session(request)
    gateway = _console(request).gateway(session)
    try:
        content_type, data = await _call(
            read.icon, gateway, session.namespace, request.match_info["name"]
        )
    except NotFound:
        raise web.HTTPNotFound() from None
    if not content_type.startswith("image/"):
        content_type = "application/octet-stream"
    # A catalog's SVG opened as a page of its own must not run: sandboxed, no script at all.
    policy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return web.Response(
        body=data, content_type=content_type.split(";")[0], headers={"X-Icon-Policy": policy}
    )


async def install_post(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    form = install.InstallForm.from_post({k: str(v) for k, v in (await request.post()).items()})
    manifest = await _call(
        read.package_manifest,
        gateway,
        session.namespace,
        form.catalog_namespace,
        form.catalog,
        form.package,
    )
    if manifest is None:
        return _page(
            request,
            "error.html",
            404,
            title="No such package",
            error=f"No package {form.package} in catalog {form.catalog_namespace}/{form.catalog}.",
        )
    card = catalog.card(manifest)
    groups = await _call(read.listed, gateway, Kind.OPERATOR_GROUP, form.target)
    subs = await _call(read.listed, gateway, Kind.SUBSCRIPTION, form.target)
    decision = install.decide(form, card, groups, subs)
    if decision.problems:
        can = await _call(
            read.allowed,
            gateway,
            session,
            "create",
            "operators.coreos.com",
            "subscriptions",
            session.namespace,
        )
        return _page(
            request,
            "package.html",
            400,
            card=card,
            selected=form.channel,
            can_install=can,
            namespace=session.namespace,
            error=" ".join(decision.problems),
        )
    await _call(read.create_all, gateway, decision.creates)
    raise web.HTTPSeeOther(f"/operators?namespace={decision.namespace}")


# ----- installed operators ------------------------------------------------------------------


async def operators_page(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    namespace = request.query.get("namespace", "").strip()
    notes: list[str] = []
    try:
        csvs = await _call(read.listed, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace)
        subs = await _call(read.listed, gateway, Kind.SUBSCRIPTION, namespace)
        plans = await _call(read.listed, gateway, Kind.INSTALL_PLAN, namespace)
    except GatewayError as exc:
        if exc.status != 403:
            raise
        where = f"namespace {namespace}" if namespace else "all namespaces"
        notes.append(f"You may not list operators in {where}: {exc}")
        csvs, subs, plans = [], [], []
    waiting = [p for p in operators.plans(plans) if p.waiting]
    return _page(
        request,
        "operators.html",
        rows=operators.installed(csvs, subs),
        plans=waiting,
        namespace=namespace,
        notes=notes,
    )


async def operator_page(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    csv = await _call(read.get, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace, name)
    subs = await _call(read.listed, gateway, Kind.SUBSCRIPTION, namespace)
    plans = await _call(read.listed, gateway, Kind.INSTALL_PLAN, namespace)
    rows = operators.installed([csv], subs)
    if not rows:
        raise web.HTTPSeeOther(
            f"/operators/{csv['metadata']['annotations'].get('olm.operatorNamespace', namespace)}/{name}"
        )
    try:
        events = operators.events_about(
            await _call(read.events, gateway, namespace), "ClusterServiceVersion", name
        )
    except GatewayError:
        events = []
    row = rows[0]
    explanation = [] if row.succeeded else await _call(read.explanation, gateway, namespace, name)
    found: list[tuple[operands.OwnedApi, list[tuple[dict[str, Any], list[str]]]]] = []
    can_create: dict[str, bool] = {}
    for api in operands.owned_apis(csv):
        try:
            items = await _call(read.operands, gateway, api.api_version, api.plural, namespace)
        except GatewayError:
            items = []
        found.append(
            (api, [(i, [operands.field_at(i, p) for p, _ in api.status_fields]) for i in items])
        )
        can_create[api.kind] = await _call(
            read.allowed, gateway, session, "create", api.group, api.plural, namespace
        )
    can_uninstall = await _call(
        read.allowed, gateway, session, "delete", "operators.coreos.com", "subscriptions", namespace
    )
    waiting = [p for p in operators.plans(plans) if p.waiting]
    return _page(
        request,
        "operator.html",
        row=row,
        explanation=explanation,
        operands=found,
        can_create=can_create,
        can_uninstall=can_uninstall,
        events=events,
        plans=waiting,
    )


# ----- InstallPlans -------------------------------------------------------------------------


async def plan_page(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    try:
        result, plan = await _call(read.plan_preview, gateway, namespace, name)
    except PlanShowError as exc:
        return _page(request, "error.html", 404, title="No such InstallPlan", error=str(exc))
    steps = [
        (
            str((s.get("resource") or {}).get("kind") or ""),
            str((s.get("resource") or {}).get("name") or ""),
            str(s.get("status") or ""),
        )
        for s in (plan.get("status") or {}).get("plan") or []
        if isinstance(s, dict)
    ]
    waiting = operators.plans([plan])[0].waiting
    can_approve = waiting and await _call(
        read.allowed, gateway, session, "patch", "operators.coreos.com", "installplans", namespace
    )
    return _page(
        request,
        "plan.html",
        namespace=namespace,
        name=name,
        preview=result,
        flags=[FLAG_WORDS[f] for f in result.flags],
        lines=preview_lines(result),
        steps=steps,
        waiting=waiting,
        can_approve=can_approve,
    )


async def approve_post(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    await _call(read.approve, console.gateway(session), namespace, name)
    raise web.HTTPSeeOther(f"/operators?namespace={namespace}")


# ----- operands -----------------------------------------------------------------------------


async def _owned(request: web.Request) -> tuple[Any, dict[str, Any], operands.OwnedApi, str, str]:
    console, session = _console(request), _session(request)
    gateway = console.gateway(session)
    namespace, name, kind = (request.match_info[k] for k in ("namespace", "name", "kind"))
    csv = await _call(read.get, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace, name)
    api = next((a for a in operands.owned_apis(csv) if a.kind == kind), None)
    if api is None:
        raise web.HTTPNotFound(text=f"{name} owns no API of kind {kind}")
    return gateway, csv, api, namespace, name


async def operand_form(request: web.Request) -> web.Response:
    gateway, csv, api, namespace, name = await _owned(request)
    definition = await _call(read.crd, gateway, api.crd)
    start = operands.starting_object(api, csv, definition, namespace)
    return _page(
        request,
        "operand_new.html",
        api=api,
        csv=name,
        namespace=namespace,
        text=operands.as_yaml(start),
        from_example=bool(operands.examples(csv)),
    )


async def operand_post(request: web.Request) -> web.Response:
    gateway, csv, api, namespace, name = await _owned(request)
    text = str((await request.post()).get("yaml") or "")
    obj, problem = operands.parse_operand(text, operands.owned_apis(csv), namespace)
    if obj is None:
        return _page(
            request,
            "operand_new.html",
            400,
            api=api,
            csv=name,
            namespace=namespace,
            text=text,
            from_example=False,
            error=problem,
        )
    try:
        await _call(read.create_all, gateway, [obj])
    except GatewayError as exc:
        return _page(
            request,
            "operand_new.html",
            400,
            api=api,
            csv=name,
            namespace=namespace,
            text=text,
            from_example=False,
            error=_refusal(exc),
        )
    raise web.HTTPSeeOther(f"/operators/{namespace}/{name}")


# ----- uninstall ----------------------------------------------------------------------------


async def uninstall_page(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    namespace, package = request.match_info["namespace"], request.match_info["package"]
    found, lines = await _call(read.uninstall_preview, console.gateway(session), package, namespace)
    return _page(
        request,
        "uninstall.html",
        namespace=namespace,
        package=package,
        lines=lines,
        found=found,
        done=False,
    )


async def uninstall_post(request: web.Request) -> web.Response:
    console, session = _console(request), _session(request)
    namespace, package = request.match_info["namespace"], request.match_info["package"]
    try:
        lines = await _call(read.run_uninstall, console.gateway(session), package, namespace)
    except UninstallError as exc:
        return _page(
            request,
            "uninstall.html",
            502,
            namespace=namespace,
            package=package,
            lines=[],
            found=True,
            done=False,
            error=str(exc),
        )
    return _page(
        request,
        "uninstall.html",
        namespace=namespace,
        package=package,
        lines=lines,
        found=False,
        done=True,
    )


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
            web.get("/catalog", catalog_page),
            web.get("/packages/{catalog_ns}/{catalog}/{name}", package_page),
            web.get("/icons/{catalog_ns}/{name}", icon),
            web.post("/install", install_post),
            web.get("/operators", operators_page),
            web.get("/operators/{namespace}/{name}", operator_page),
            web.get("/plans/{namespace}/{name}", plan_page),
            web.post("/plans/{namespace}/{name}/approve", approve_post),
            web.get("/operands/{namespace}/{name}/{kind}/new", operand_form),
            web.post("/operands/{namespace}/{name}/{kind}", operand_post),
            web.get("/uninstall/{namespace}/{package}", uninstall_page),
            web.post("/uninstall/{namespace}/{package}", uninstall_post),
            web.static("/static", str(static)),
        ]
    )
    return app
