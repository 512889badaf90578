"""Who is asking, and may they: delegated authentication and authorization as every
aggregated API server does it (the kube-aggregator proxies a user's request to us).

- Authentication: the aggregator presents its front-proxy client certificate, signed by the
  request-header CA that `kube-system/extension-apiserver-authentication` publishes, with a
  common name among `requestheader-allowed-names` (any, when that list is empty); the user,
  groups and extra are then in its request headers (`X-Remote-User`, `X-Remote-Group`,
  `X-Remote-Extra-*`, or the names that ConfigMap gives). Anyone else is anonymous.
- Authorization: a SubjectAccessReview per (user, groups, verb, namespace, subresource, name),
  its answer kept for ten seconds (the kube-apiserver's delegated defaults).

Invariants: a request is never authorized without a verified proxy certificate; a failed
review denies (and says why); nothing here logs a credential.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

AUTH_CONFIGMAP_NAMESPACE = "kube-system"
AUTH_CONFIGMAP = "extension-apiserver-authentication"
DECISION_TTL_SECONDS = 10.0


@dataclass(frozen=True)
class RequestHeaderConfig:
    """What the cluster says about its front proxy."""

    ca_pem: str = ""
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_prefixes: tuple[str, ...] = ("X-Remote-Extra-",)

    @classmethod
    def from_configmap(cls, data: Mapping[str, str]) -> RequestHeaderConfig:
        def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            try:
                value = json.loads(data.get(key, "") or "null")
            except ValueError:
                return default
            return tuple(str(v) for v in value) if isinstance(value, list) and value else default

        return cls(
            ca_pem=data.get("requestheader-client-ca-file", ""),
            allowed_names=names("requestheader-allowed-names", ()),
            username_headers=names("requestheader-username-headers", cls.username_headers),
            group_headers=names("requestheader-group-headers", cls.group_headers),
            extra_prefixes=names("requestheader-extra-headers-prefix", cls.extra_prefixes),
        )


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def common_name(peercert: Mapping[str, Any] | None) -> str | None:
    """The subject CN of a verified client certificate (`ssl` peercert dict), else None."""
    if not peercert:
        return None
    for rdn in peercert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


def proxied_user(
    config: RequestHeaderConfig, peer_cn: str | None, headers: Mapping[str, str]
) -> User | None:
    """The user the front proxy vouches for, or None (not the proxy, or no user)."""
    if peer_cn is None or (config.allowed_names and peer_cn not in config.allowed_names):
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    name = next((lowered[h.lower()] for h in config.username_headers if h.lower() in lowered), "")
    if not name:
        return None
    groups: list[str] = []
    extra: dict[str, tuple[str, ...]] = {}
    for key, value in headers.items():  # a multidict: repeated headers come once each
        low = key.lower()
        if any(low == h.lower() for h in config.group_headers):
            groups.append(value)
        for prefix in config.extra_prefixes:
            if low.startswith(prefix.lower()):
                extra_key = low[len(prefix) :]
                extra[extra_key] = (*extra.get(extra_key, ()), value)
    return User(name, tuple(groups), extra)


@dataclass(frozen=True)
class Attributes:
    verb: str
    namespace: str
    group: str
    resource: str
    subresource: str = ""
    name: str = ""


def review(user: User, attributes: Attributes) -> dict[str, Any]:
    """The SubjectAccessReview asking whether `user` may do `attributes`."""
    resource: dict[str, str] = {
        "verb": attributes.verb,
        "group": attributes.group,
        "resource": attributes.resource,
    }
    for key, value in (
        ("namespace", attributes.namespace),
        ("subresource", attributes.subresource),
        ("name", attributes.name),
    ):
        if value:
            resource[key] = value
    spec: dict[str, Any] = {
        "user": user.name,
        "groups": list(user.groups),
        "resourceAttributes": resource,
    }
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": {},
        "spec": spec,
    }


Decision = tuple[bool, str]  # (allowed, why not)


class Authorizer:
    """SubjectAccessReviews through `ask` (returns the review's status), answers cached."""

    def __init__(
        self,
        ask: Callable[[dict[str, Any]], Mapping[str, Any]],
        ttl: float = DECISION_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ask, self._ttl, self._clock = ask, ttl, clock
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Decision]] = {}

    def allowed(self, user: User, attributes: Attributes) -> Decision:
        body = review(user, attributes)
        key = json.dumps(body["spec"], sort_keys=True)
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        try:
            status = self._ask(body)
        except Exception as exc:  # the API server did not answer: deny, and say why
            return False, f"authorization check failed: {exc}"
        decision = (bool(status.get("allowed")), str(status.get("reason") or ""))
        with self._lock:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = (now + self._ttl, decision)
        return decision
