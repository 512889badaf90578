"""The console's server without a cluster: sign-in redirects, headers, cookies, CSRF and the
read-only mode are enforced before any API call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestClient, TestServer

from olm.console.security import LOGIN_COOKIE, SESSION_COOKIE
from olm.console.server import Console, application
from olm.kube.bearer import Cluster

NOWHERE = Cluster("https://127.0.0.1:9", None)


def run(console: Console, steps: Callable[[TestClient], Awaitable[None]]) -> None:
    async def main() -> None:
        async with TestClient(TestServer(application(console))) as client:
            await steps(client)

    asyncio.run(main())


def test_pages_need_a_session_and_carry_the_security_headers() -> None:
    async def steps(client: TestClient) -> None:
        response = await client.get("/catalog", allow_redirects=False)
        assert response.status == 303 and response.headers["Location"] == "/login"
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        login = await client.get("/login")
        assert login.status == 200 and login.headers["X-Frame-Options"] == "DENY"
        cookie = login.headers["Set-Cookie"]
        assert LOGIN_COOKIE in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert (await client.post("/install", data={"csrf": "x"})).status == 403

    run(Console(NOWHERE), steps)


def test_sign_in_needs_the_login_forms_csrf_token() -> None:
    async def steps(client: TestClient) -> None:
        refused = await client.post("/login", data={"token": "t", "csrf": "guess"})
        assert refused.status == 403 and "CSRF" in await refused.text()
        expired = await client.get("/login?code=unknown")
        assert expired.status == 403

    run(Console(NOWHERE), steps)


def test_forged_csrf_and_read_only_refuse_before_any_api_call() -> None:
    console = Console(NOWHERE, read_only=True)
    session_id, session = console.sessions.start("tok", "shop", "alice")

    async def steps(client: TestClient) -> None:
        client.session.cookie_jar.update_cookies({SESSION_COOKIE: session_id})
        forged = await client.post("/install", data={"csrf": "forged"})
        missing = await client.post("/plans/shop/p/approve", data={})
        for response in (forged, missing):
            assert response.status == 403 and "CSRF" in await response.text()
        odd = await client.get("/operators/a..b/x")
        assert odd.status == 400
        read_only = await client.post("/install", data={"csrf": session.csrf})
        assert read_only.status == 403 and "read-only" in await read_only.text()
        out = await client.post("/logout", data={"csrf": session.csrf}, allow_redirects=False)
        assert out.status == 303 and console.sessions.get(session_id) is None

    run(console, steps)
