"""The web console as its e2e stories use it: `olm console` as a subprocess (`ConsoleServer`),
a headless Debian Chromium driven by Playwright (`browser`), tokens of ServiceAccounts to sign
in with, and page steps that wait for a state (`reload_until`).

Invariant: every wait polls what the page shows (reloading it), bounded by STEP_TIMEOUT.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from olm.devcluster.browser import ensure_chromium
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for

SCREENSHOTS_ENV = "OLM_CONSOLE_SCREENSHOTS"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


class ConsoleServer:
    """`olm console` against the test cluster, on a free loopback port."""

    def __init__(self, plane: ControlPlane, log_path: Path, *args: str) -> None:
        self.plane, self.log_path, self.args = plane, log_path, args
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            command = [sys.executable, "-m", "olm.cli", "console", "--port", str(self.port)]
            self.process = subprocess.Popen(
                [*command, "--kubeconfig", str(self.plane.kubeconfig), *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.plane.env(),
            )
        wait_for(lambda: _healthy(self.url), timeout=STEP_TIMEOUT, what="olm console to serve")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(20)


@contextmanager
def browser() -> Iterator[Browser]:
    """Headless Chromium (Debian's, installed by `make browser` if missing)."""
    executable = ensure_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), headless=True)
        try:
            yield launched
        finally:
            launched.close()


def service_account_token(plane: ControlPlane, namespace: str, name: str) -> str:
    """A token of ServiceAccount `namespace/name` (created if missing), for signing in."""
    plane.kubectl("create", "serviceaccount", name, "-n", namespace, check=False)
    return plane.kubectl("create", "token", name, "-n", namespace).stdout.strip()


def bind(plane: ControlPlane, namespace: str, name: str, role: dict[str, Any] | None) -> None:
    """Let ServiceAccount `namespace/name` act with `role`'s rules in `namespace`, or as
    cluster-admin everywhere when `role` is None (a ClusterRoleBinding named after both)."""
    subject = {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    if role is None:
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"console-{namespace}-{name}"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [subject],
        }
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(binding))
        return
    objects = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
            **role,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [subject],
        },
    ]
    for obj in objects:
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


def sign_in(page: Page, url: str, token: str, namespace: str) -> None:
    page.goto(f"{url}/catalog")
    page.fill("input[name=token]", token)
    page.fill("input[name=namespace]", namespace)
    page.click("#sign-in")
    page.wait_for_url(f"{url}/catalog")


def reload_until(page: Page, selector: str, what: str, text: str | None = None) -> None:
    """Reload `page` until `selector` (with `text`, if given) is on it."""

    def shown() -> bool:
        page.reload()
        found = page.locator(selector)
        if text is not None:
            found = found.filter(has_text=text)
        return found.count() > 0

    wait_for(shown, timeout=STEP_TIMEOUT, interval=1.0, what=what)


def screenshot(page: Page, name: str) -> None:
    """With $OLM_CONSOLE_SCREENSHOTS set (`make console-screenshots`), save the page there."""
    folder = os.environ.get(SCREENSHOTS_ENV)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
