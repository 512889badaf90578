"""Delegated authentication and authorization of the aggregated API server."""

from __future__ import annotations

from typing import Any

from multidict import CIMultiDict

from olm.apiserver.auth import (
    Attributes,
    Authorizer,
    RequestHeaderConfig,
    User,
    common_name,
    proxied_user,
)

CONFIG = RequestHeaderConfig.from_configmap(
    {
        "requestheader-client-ca-file": "PEM",
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    }
)
PEER = {"subject": ((("organizationName", "x"),), (("commonName", "front-proxy-client"),))}


def test_the_front_proxy_vouches_for_the_user_in_its_headers() -> None:
    headers = CIMultiDict(
        [
            ("X-Remote-User", "alice"),
            ("X-Remote-Group", "dev"),
            ("X-Remote-Group", "system:authenticated"),
            ("X-Remote-Extra-Scopes", "a"),
        ]
    )
    user = proxied_user(CONFIG, common_name(PEER), headers)
    assert user == User("alice", ("dev", "system:authenticated"), {"scopes": ("a",)})


def test_anyone_else_is_nobody() -> None:
    headers = CIMultiDict([("X-Remote-User", "alice")])
    assert proxied_user(CONFIG, None, headers) is None  # no verified certificate
    assert proxied_user(CONFIG, "someone-else", headers) is None  # not an allowed name
    assert proxied_user(CONFIG, "front-proxy-client", CIMultiDict()) is None  # no user


def test_reviews_are_asked_once_and_remembered_for_a_while() -> None:
    asked: list[dict[str, Any]] = []
    now = [0.0]

    def ask(review: dict[str, Any]) -> dict[str, Any]:
        asked.append(review)
        return {"allowed": review["spec"]["user"] == "alice", "reason": "RBAC"}

    authorizer = Authorizer(ask, ttl=10, clock=lambda: now[0])
    attributes = Attributes("list", "team-a", "packages.operators.coreos.com", "packagemanifests")
    assert authorizer.allowed(User("alice"), attributes) == (True, "RBAC")
    assert authorizer.allowed(User("alice"), attributes) == (True, "RBAC")
    assert authorizer.allowed(User("bob"), attributes) == (False, "RBAC")
    assert len(asked) == 2
    spec = asked[0]["spec"]["resourceAttributes"]
    assert spec == {
        "verb": "list",
        "group": "packages.operators.coreos.com",
        "resource": "packagemanifests",
        "namespace": "team-a",
    }
    now[0] = 11
    authorizer.allowed(User("alice"), attributes)
    assert len(asked) == 3


def test_a_failed_review_denies_and_says_why() -> None:
    def ask(review: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("connection refused")

    allowed, why = Authorizer(ask).allowed(User("a"), Attributes("get", "", "g", "r"))
    assert not allowed and "connection refused" in why
