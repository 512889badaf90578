"""The I/O of `olm rollback`: read the Subscription, annotate it, wait for olm-py's answer.

Invariants: it acts with the user's own kubeconfig (a merge patch of two annotations on the
Subscription, field manager FIELD_MANAGER); a refused request is undone, so the Subscription
keeps the annotations it had; nothing is approved: the plan waits for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.api.versionpolicy import RollbackReason
from olm.kube.connect import Unreachable, user_gateway
from olm.kube.errors import GatewayError, NotFound
from olm.kube.gateway import Gateway
from olm.kube.protocol import KubeGateway
from olm.rollback.plan import Request, RollbackRefused, answer, done, request
from olm.waiting import attempts

FIELD_MANAGER = "olm-py-rollback"
POLL_SECONDS = 1.0
PACKAGES_API = "packages.operators.coreos.com/v1"
Say = Callable[[str], None]


class RollbackError(RuntimeError):
    """Something the user can act on; printed as one line by the olm command."""


def gateway_for(kubeconfig: str | None) -> Gateway:
    try:
        return user_gateway(kubeconfig, FIELD_MANAGER)
    except Unreachable as exc:
        raise RollbackError(str(exc)) from None


def _get(gateway: KubeGateway, kind: Kind, namespace: str, name: str) -> dict[str, Any] | None:
    info = KINDS[kind]
    try:
        return gateway.get(info.api_version, info.kind.value, namespace, name)
    except NotFound:
        return None


def _entries(gateway: KubeGateway, namespace: str, package: str) -> list[tuple[str, str]]:
    """(CSV, version) of every channel entry the package's PackageManifest lists; none when
    the PackageManifest API cannot be read (the CSV's name then tells the version)."""
    try:
        manifest = gateway.get(PACKAGES_API, "PackageManifest", namespace, package)
    except GatewayError:
        return []
    return [
        (str(entry.get("name")), str(entry.get("version")))
        for channel in (manifest.get("status") or {}).get("channels") or []
        for entry in channel.get("entries") or []
        if entry.get("name") and entry.get("version")
    ]


def _patch(gateway: KubeGateway, req: Request, annotations: dict[str, str | None]) -> None:
    info = KINDS[Kind.SUBSCRIPTION]
    gateway.patch(
        info.api_version,
        info.kind.value,
        req.namespace,
        req.subscription,
        {"metadata": {"annotations": annotations}},
    )


def rollback(
    gateway: KubeGateway,
    name: str,
    namespace: str,
    to: str = "",
    dry_run: bool = False,
    timeout: float = 120.0,
    say: Say = print,
) -> int:
    """Ask for the rollback and report olm-py's answer; the exit status (0 planned or done)."""
    subscription = _get(gateway, Kind.SUBSCRIPTION, namespace, name)
    if subscription is None:
        raise RollbackError(
            f"no Subscription {name} in namespace {namespace} (kubectl get sub -n {namespace})"
        )
    installed = str((subscription.get("status") or {}).get("installedCSV") or "")
    csv = _get(gateway, Kind.CLUSTER_SERVICE_VERSION, namespace, installed) if installed else None
    package = str((subscription.get("spec") or {}).get("name") or "")
    try:
        req = request(subscription, csv, to, _entries(gateway, namespace, package))
    except RollbackRefused as exc:
        raise RollbackError(str(exc)) from None
    say(
        f"rollback of Subscription {name} in {namespace}: {req.installed} -> {req.target} ({req.version})"
    )
    if dry_run:
        say(f"dry run: would annotate it {req.annotations()} and wait for olm-py's plan")
        return 0
    _patch(gateway, req, req.annotations())
    for _ in attempts(timeout, POLL_SECONDS):
        current = _get(gateway, Kind.SUBSCRIPTION, namespace, name) or {}
        reason, message, plan = answer(current, req.target)
        if done(reason):
            _report(req, reason, message, plan, say)
            return 0
        if reason == RollbackReason.ROLLBACK_REFUSED:
            _patch(gateway, req, req.undo())
            say(f"refused: {message}")
            say("nothing changed: the Subscription's annotations are as they were")
            return 1
    say(
        f"olm-py has not answered within {timeout:.0f} s (is it running? kubectl get "
        f"subscription {name} -n {namespace} -o yaml shows its Rollback condition once "
        "it does); the request stays on the Subscription"
    )
    return 1


def _report(req: Request, reason: str, message: str, plan: str, say: Say) -> None:
    if reason == RollbackReason.ROLLED_BACK:
        say(message)
        return
    say(f"InstallPlan {plan} moves it back; it waits for your approval. Read it, then approve it:")
    say(f"  olm plan show {plan} -n {req.namespace}")
    say(
        f"  kubectl patch installplan {plan} -n {req.namespace} --type merge "
        '-p \'{"spec":{"approved":true}}\''
    )
    say(
        f"Afterwards the Subscription stays on {req.version} (olm-py.io/version-range="
        f"{req.version}); change or remove that annotation to upgrade again. Operands are untouched."
    )
