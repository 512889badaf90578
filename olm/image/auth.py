"""Registry credentials: docker config files (`~/.docker/config.json`, pull Secrets of type
kubernetes.io/dockerconfigjson or dockercfg) and WWW-Authenticate challenges.

Invariant: pure; credentials are looked up by registry host, the way docker and containerd
match `auths` keys (with or without scheme and path; Docker Hub under its historic URL).
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOCKER_HUB_KEYS = (
    "https://index.docker.io/v1/",
    "index.docker.io",
    "docker.io",
    "registry-1.docker.io",
)


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    token: str = ""  # an identity token (OAuth2 refresh token), when the config has one


def _host(key: str) -> str:
    text = re.sub(r"^[a-z]+://", "", key.strip())
    return text.split("/", 1)[0]


def _entry(raw: Any) -> Credentials | None:
    if not isinstance(raw, Mapping):
        return None
    if isinstance(raw.get("auth"), str) and raw["auth"]:
        try:
            decoded = base64.b64decode(raw["auth"], validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        username, colon, password = decoded.partition(":")
        if not colon:
            return None
        return Credentials(username, password, str(raw.get("identitytoken") or ""))
    if raw.get("username") or raw.get("password"):
        return Credentials(
            str(raw.get("username") or ""),
            str(raw.get("password") or ""),
            str(raw.get("identitytoken") or ""),
        )
    if raw.get("identitytoken"):
        return Credentials("", "", str(raw["identitytoken"]))
    return None


def auths(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `auths` map of a config.json, or a bare .dockercfg map."""
    inner = config.get("auths")
    return inner if isinstance(inner, Mapping) else config


def credentials_for(registry: str, configs: Iterable[Mapping[str, Any]]) -> Credentials | None:
    """The first credentials for `registry` (host[:port]) in `configs`, in order."""
    wanted = {registry}
    if registry == "docker.io":
        wanted |= {_host(k) for k in DOCKER_HUB_KEYS}
    for config in configs:
        for key, raw in auths(config).items():
            if _host(key) in wanted:
                found = _entry(raw)
                if found is not None:
                    return found
    return None


def secret_config(secret: Mapping[str, Any]) -> dict[str, Any] | None:
    """The docker config in a pull Secret (`.dockerconfigjson` or `.dockercfg`), if any."""
    data = secret.get("data") or {}
    for key in (".dockerconfigjson", ".dockercfg"):
        if isinstance(data.get(key), str):
            try:
                config = json.loads(base64.b64decode(data[key]))
            except (ValueError, UnicodeDecodeError):
                return None
            return config if isinstance(config, dict) else None
    return None


def local_configs(environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The docker config files of the user running olm-py ($REGISTRY_AUTH_FILE, $DOCKER_CONFIG
    or ~/.docker/config.json, then podman's auth.json)."""
    env = environ if environ is not None else os.environ
    paths = []
    if env.get("REGISTRY_AUTH_FILE"):
        paths.append(Path(env["REGISTRY_AUTH_FILE"]))
    docker = Path(env["DOCKER_CONFIG"]) if env.get("DOCKER_CONFIG") else Path.home() / ".docker"
    paths.append(docker / "config.json")
    if env.get("XDG_RUNTIME_DIR"):
        paths.append(Path(env["XDG_RUNTIME_DIR"]) / "containers" / "auth.json")
    found = []
    for path in paths:
        try:
            config = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(config, dict):
            found.append(config)
    return found


_PARAM = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="...",service="...",scope="..."` -> ("bearer", {realm, service, scope})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {
        m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _PARAM.finditer(rest)
    }
    return scheme.lower(), params


def basic_header(credentials: Credentials) -> str:
    raw = f"{credentials.username}:{credentials.password}".encode()
    return "Basic " + base64.b64encode(raw).decode()


# olm-py's own ServiceAccount, whose imagePullSecrets are used after a CatalogSource's
# spec.secrets (as OLM's unpack Jobs run with them). Named by $OLM_SERVICE_ACCOUNT (with
# $POD_NAMESPACE, else the token mount's namespace file), else read from the mounted token.
SERVICE_ACCOUNT_ENV = "OLM_SERVICE_ACCOUNT"
NAMESPACE_ENV = "POD_NAMESPACE"
TOKEN_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_SUBJECT_PREFIX = "system:serviceaccount:"


def token_service_account(token: str) -> tuple[str, str] | None:
    """(namespace, name) of the ServiceAccount a Kubernetes token was issued to, read from its
    claims (bound tokens' `kubernetes.io`, legacy tokens' `kubernetes.io/serviceaccount/...`,
    else `sub`). The token is not verified: it only names the account to read."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(claims, dict):
        return None
    bound = claims.get("kubernetes.io")
    if isinstance(bound, dict):
        account = bound.get("serviceaccount")
        namespace = bound.get("namespace")
        if isinstance(account, dict) and isinstance(namespace, str) and account.get("name"):
            return namespace, str(account["name"])
    namespace = claims.get("kubernetes.io/serviceaccount/namespace")
    name = claims.get("kubernetes.io/serviceaccount/service-account.name")
    if isinstance(namespace, str) and isinstance(name, str) and namespace and name:
        return namespace, name
    subject = claims.get("sub")
    if isinstance(subject, str) and subject.startswith(_SUBJECT_PREFIX):
        namespace, colon, name = subject.removeprefix(_SUBJECT_PREFIX).partition(":")
        if colon and namespace and name:
            return namespace, name
    return None


def own_service_account(
    environ: Mapping[str, str] | None = None, token_dir: Path = TOKEN_DIR
) -> tuple[str, str] | None:
    """(namespace, name) of the ServiceAccount olm-py runs as, or None (out of a cluster)."""
    env = environ if environ is not None else os.environ
    name = env.get(SERVICE_ACCOUNT_ENV, "").strip()
    if name:
        namespace = env.get(NAMESPACE_ENV, "").strip()
        if not namespace:
            try:
                namespace = (token_dir / "namespace").read_text().strip()
            except OSError:
                return None
        return (namespace, name) if namespace else None
    try:
        token = (token_dir / "token").read_text()
    except OSError:
        return None
    return token_service_account(token)


def pull_secret_names(service_account: Mapping[str, Any]) -> tuple[str, ...]:
    """The Secret names in a ServiceAccount's `imagePullSecrets`, in order."""
    entries = service_account.get("imagePullSecrets") or []
    if not isinstance(entries, list):
        return ()
    return tuple(
        str(entry["name"]) for entry in entries if isinstance(entry, Mapping) and entry.get("name")
    )
