"""The console's security rules: sessions, CSRF tokens, cookies and response headers.

Invariants:
- A session holds the user's bearer token on the server; the browser holds only a random
  session id, in a cookie that is HttpOnly and SameSite=Strict (and Secure over HTTPS).
- Every state-changing request carries the session's CSRF token, compared in constant time;
  the login form's token is bound to a pre-login cookie the same way.
- Sessions expire (`SESSION_SECONDS` after sign-in) and are forgotten on sign-out.
- The Content-Security-Policy allows scripts, styles and images from the console only: no
  inline script, no eval, no framing, no form posts elsewhere.
- What a session remembers (access reviews 30 s, the catalog list 10 s) is that user's own
  reads, never shared with another session.
- A name taken from a URL (namespace, object, kind) is a Kubernetes name or is refused, so
  it cannot change the API path it is put in.
- Pure apart from the random numbers and the clock, both injectable for tests.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SESSION_COOKIE = "olm_console_session"
LOGIN_COOKIE = "olm_console_login"
SESSION_SECONDS = 8 * 3600
LIST_SECONDS = 10.0
ONE_TIME_SECONDS = 300

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?")


def valid_name(value: str) -> bool:
    """A namespace, object name or kind as the console's URLs carry them: nothing that could
    change the API path it is put in (no "/", "?", "%", "..")."""
    return bool(_NAME.fullmatch(value)) and ".." not in value


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def same(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a submitted token with the expected one."""
    return bool(given) and hmac.compare_digest(str(given).encode(), expected.encode())


def cookie_attributes(secure: bool) -> dict[str, object]:
    return {"httponly": True, "samesite": "Strict", "secure": secure, "path": "/"}


@dataclass
class Session:
    token: str
    csrf: str
    namespace: str
    user: str
    expires: float
    allowed: dict[tuple[str, str, str, str], tuple[float, bool]] = field(default_factory=dict)
    lists: dict[tuple[str, str], tuple[float, Any]] = field(default_factory=dict)

    def remember(self, key: tuple[str, str], value: Any, now: float) -> None:
        """Keep a list this user read (the catalog), for `LIST_SECONDS`: the next filter or
        search of the same user does not read it again. Never shared between sessions."""
        self.lists[key] = (now, value)

    def recall(self, key: tuple[str, str], now: float) -> Any:
        found = self.lists.get(key)
        return found[1] if found and now - found[0] < LIST_SECONDS else None

    @property
    def fingerprint(self) -> str:
        """A stable, non-reversible name of the token (a cache key; never the token)."""
        return hashlib.sha256(self.token.encode()).hexdigest()[:16]


@dataclass
class Sessions:
    """Signed-in sessions and one-time sign-in codes, kept in memory."""

    clock: Callable[[], float] = time.monotonic
    secret: Callable[[], str] = new_secret
    sessions: dict[str, Session] = field(default_factory=dict)
    codes: dict[str, tuple[str, str, float]] = field(default_factory=dict)

    def start(self, token: str, namespace: str, user: str = "") -> tuple[str, Session]:
        self.sweep()
        session_id = self.secret()
        session = Session(token, self.secret(), namespace, user, self.clock() + SESSION_SECONDS)
        self.sessions[session_id] = session
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        session = self.sessions.get(session_id or "")
        if session is None:
            return None
        if session.expires <= self.clock():
            self.sessions.pop(session_id or "", None)
            return None
        return session

    def end(self, session_id: str | None) -> None:
        self.sessions.pop(session_id or "", None)

    def one_time_code(self, token: str, namespace: str) -> str:
        """A code that signs in once (`olm console` prints a URL with it), within 5 minutes."""
        code = self.secret()
        self.codes[code] = (token, namespace, self.clock() + ONE_TIME_SECONDS)
        return code

    def redeem(self, code: str | None) -> tuple[str, str] | None:
        found = self.codes.pop(code or "", None)
        if found is None or found[2] <= self.clock():
            return None
        return found[0], found[1]

    def sweep(self) -> None:
        now = self.clock()
        for key in [k for k, s in self.sessions.items() if s.expires <= now]:
            del self.sessions[key]


ALLOWED_SECONDS = 30.0


def remembered(session: Session, key: tuple[str, str, str, str], now: float) -> bool | None:
    """A SelfSubjectAccessReview answer of the last 30 seconds, or None."""
    found = session.allowed.get(key)
    return found[1] if found and now - found[0] < ALLOWED_SECONDS else None


def access_review(verb: str, group: str, resource: str, namespace: str) -> dict[str, object]:
    """The SelfSubjectAccessReview that asks whether the user may `verb` `resource`."""
    attributes: dict[str, str] = {"verb": verb, "group": group, "resource": resource}
    if namespace:
        attributes["namespace"] = namespace
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": attributes},
    }
