"""What the console's request handlers share: the `Console` (cluster, sessions, the users'
gateways), the request's session, and how a page is answered.

Invariants: a user's gateway carries that user's token alone (olm.kube.bearer), one per
token; blocking API calls run in a worker thread (`call`); a refusal of the API server is
shown in words, never as a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from olm.console import views
from olm.console.security import Session, Sessions, cookie_attributes
from olm.kube.bearer import Cluster, token_gateway
from olm.kube.errors import GatewayError

FIELD_MANAGER = "olm-py-console"


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


def console_of(request: web.Request) -> Console:
    return request.app[CONSOLE]


def session_of(request: web.Request) -> Session:
    return request[SESSION]


def respond(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    session = request.get(SESSION)
    html = views.page(
        template,
        session=session,
        csrf=session.csrf if session else "",
        read_only=console_of(request).read_only,
        **context,
    )
    return web.Response(text=html, content_type="text/html", status=status)


def set_cookie(
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


def refusal(exc: GatewayError) -> str:
    if exc.status == 403:
        return f"Kubernetes refused this as you: {exc}"
    return f"The API server answered: {exc}"


async def call(function: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(function, *args)
