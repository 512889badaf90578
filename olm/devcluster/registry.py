"""The local OCI registry `olm dev up` starts beside the control plane: Debian's
`docker-registry` (distribution 2.8) on 127.0.0.1:<free port>, storage in the cluster's state
directory, plain HTTP (loopback only). `olm dev env` names it as OLM_REGISTRY=127.0.0.1:PORT.

`ensure_registry_binary` installs the Debian package when it is missing (apt-get, as the other
install steps of this project do); `config` is pure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from olm.devcluster.ports import LOOPBACK

REGISTRY = "registry"
REGISTRY_ENV = "OLM_REGISTRY"
BINARY_NAME = "docker-registry"
DEBIAN_PACKAGE = "docker-registry"
APT_INSTALL = [
    "apt-get",
    "-o",
    "DPkg::Lock::Timeout=600",
    "install",
    "-y",
    "--no-install-recommends",
    DEBIAN_PACKAGE,
]


class RegistryUnavailable(RuntimeError):
    """docker-registry is not installed and could not be installed; the message says how."""


def find_binary() -> Path | None:
    found = shutil.which(BINARY_NAME) or (
        "/usr/bin/docker-registry" if Path("/usr/bin/docker-registry").is_file() else None
    )
    return Path(found) if found else None


def ensure_registry_binary(install: bool = True) -> Path:
    """The docker-registry binary, installed from Debian when it is missing."""
    found = find_binary()
    if found is not None or not install:
        if found is None:
            raise RegistryUnavailable(f"{BINARY_NAME} is not installed")
        return found
    try:
        result = subprocess.run(APT_INSTALL, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RegistryUnavailable(
            f"could not run apt-get to install {DEBIAN_PACKAGE} ({exc}); install it by hand: "
            + " ".join(APT_INSTALL)
        ) from exc
    found = find_binary()
    if result.returncode != 0 or found is None:
        tail = "\n".join(result.stderr.strip().splitlines()[-3:])
        raise RegistryUnavailable(
            f"installing {DEBIAN_PACKAGE} failed ({tail}); install it by hand: "
            + " ".join(APT_INSTALL)
        )
    return found


def config(storage: Path, port: int) -> str:
    """docker-registry's configuration (JSON is YAML): filesystem storage, deletes allowed,
    listening on 127.0.0.1 only."""
    return json.dumps(
        {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
            "http": {"addr": f"{LOOPBACK}:{port}", "secret": "olm-py-dev"},
        },
        indent=2,
    )


def argv(binary: Path, config_path: Path) -> list[str]:
    return [str(binary), "serve", str(config_path)]


def healthy(port: int, timeout: float = 1.0) -> tuple[bool, str]:
    """GET /v2/ answers 200 (an open registry) or 401 (one that wants credentials)."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/v2/", timeout=timeout) as answer:
            return answer.status == 200, f"HTTP {answer.status}"
    except urllib.error.HTTPError as exc:
        return exc.code == 401, f"HTTP {exc.code}"
    except OSError as exc:
        return False, str(exc)
