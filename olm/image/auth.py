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
