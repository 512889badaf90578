"""Sessions, one-time sign-in codes, CSRF comparison, the CSP and the access reviews."""

from __future__ import annotations

from olm.console.security import (
    CONTENT_SECURITY_POLICY,
    LIST_SECONDS,
    ONE_TIME_SECONDS,
    SESSION_SECONDS,
    Sessions,
    access_review,
    cookie_attributes,
    remembered,
    same,
    valid_name,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_holds_the_token_until_it_expires_or_ends() -> None:
    clock = Clock()
    sessions = Sessions(clock=clock)
    session_id, session = sessions.start("tok", "shop", "alice")
    assert session_id != "tok" and session.csrf not in (session_id, "tok")
    assert sessions.get(session_id) is session and sessions.get("guess") is None
    assert "tok" not in session.fingerprint
    clock.now += SESSION_SECONDS
    assert sessions.get(session_id) is None
    other, _ = sessions.start("tok", "shop")
    sessions.end(other)
    assert sessions.get(other) is None


def test_a_one_time_code_signs_in_once_and_expires() -> None:
    clock = Clock()
    sessions = Sessions(clock=clock)
    code = sessions.one_time_code("tok", "shop")
    assert sessions.redeem(code) == ("tok", "shop") and sessions.redeem(code) is None
    late = sessions.one_time_code("tok", "shop")
    clock.now += ONE_TIME_SECONDS
    assert sessions.redeem(late) is None and sessions.redeem(None) is None


def test_csrf_tokens_must_match_exactly() -> None:
    assert same("abc", "abc")
    assert not same("abd", "abc") and not same("", "abc") and not same(None, "abc")


def test_the_policy_allows_no_inline_script_and_no_framing() -> None:
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert cookie_attributes(True) == {
        "httponly": True,
        "samesite": "Strict",
        "secure": True,
        "path": "/",
    }


def test_access_reviews_and_their_memory() -> None:
    review = access_review("create", "operators.coreos.com", "subscriptions", "shop")
    assert review["kind"] == "SelfSubjectAccessReview"
    assert review["spec"] == {
        "resourceAttributes": {
            "verb": "create",
            "group": "operators.coreos.com",
            "resource": "subscriptions",
            "namespace": "shop",
        }
    }
    assert "namespace" not in access_review("list", "", "pods", "")["spec"]["resourceAttributes"]  # type: ignore[index]
    _, session = Sessions().start("tok", "shop")
    key = ("create", "g", "r", "shop")
    assert remembered(session, key, 0.0) is None
    session.allowed[key] = (0.0, True)
    assert remembered(session, key, 10.0) is True and remembered(session, key, 31.0) is None


def test_a_session_remembers_its_own_lists_briefly() -> None:
    sessions = Sessions()
    _, mine = sessions.start("tok", "shop")
    _, theirs = sessions.start("other", "shop")
    mine.remember(("packagemanifests", "shop"), ["m"], 100.0)
    assert mine.recall(("packagemanifests", "shop"), 105.0) == ["m"]
    assert mine.recall(("packagemanifests", "shop"), 100.0 + LIST_SECONDS) is None
    assert theirs.recall(("packagemanifests", "shop"), 105.0) is None


def test_names_from_urls_are_kubernetes_names() -> None:
    for good in ("shop", "memcached-operator.v0.0.1", "Memcached", "a"):
        assert valid_name(good), good
    for bad in ("", "..", "a/b", "a?watch=1", "a%2Fb", "-a", "a..b", "x" * 300):
        assert not valid_name(bad), bad
