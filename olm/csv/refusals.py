"""The CSV's plan after the API server refused one of its writes.

Invariants:
- Pure: the controller passes what was refused and the API server's words; the status
  message says which object, what the API server said and where in the CSV (or its
  Subscription) to fix it.
- A refusal with the same message as the CSV's Failed status changes nothing (no write, no
  event); every refusal is retried after RETRY_FAILED_INSTALL_AFTER.
"""

from __future__ import annotations

from typing import Any

from olm.api.csv import CsvPhase, CsvReason
from olm.csv.plan import Plan, World, transition
from olm.install.deployments import refusal_message

FORBIDDEN = 403
# After a failed install, wait this long before trying again (OLM retries with backoff). The
# retry is quiet: a Failed CSV re-applies its Deployments straight away, and a refusal with the
# same message leaves the status (and the CSV's resourceVersion) alone.
RETRY_FAILED_INSTALL_AFTER = 30.0


def install_failed(world: World, message: str, *, forbidden: bool = False) -> Plan:
    """The plan after the API server refused an install write (the controller's part).

    A refusal with the same message as the CSV's Failed status changes nothing (no write, no
    event); a retryable one is tried again after RETRY_FAILED_INSTALL_AFTER.
    """
    # OLM: a Forbidden error is unrecoverable until the cluster changes (rights granted to the
    # OperatorGroup's service account); OLM tries again when RBAC changes, olm-py after the same
    # pause as any refusal, so a CSV recovers once the rights are there.
    reason = (
        CsvReason.INSTALL_COMPONENT_FAILED_NO_RETRY
        if forbidden
        else CsvReason.INSTALL_COMPONENT_FAILED
    )
    plan = transition(world, CsvPhase.FAILED, reason, message)
    plan.requeue_after = RETRY_FAILED_INSTALL_AFTER
    return plan


def annotations_refused(world: World, error: str) -> Plan:
    """The API server refused olm-py's OperatorGroup annotations on the CSV (too big)."""
    annotations = world.csv["metadata"].get("annotations") or {}
    size = sum(len(k) + len(v) for k, v in annotations.items())
    return transition(
        world,
        CsvPhase.FAILED,
        CsvReason.INSTALL_COMPONENT_FAILED,
        f"olm-py could not add its OperatorGroup annotations to metadata.annotations "
        f"({size} bytes already): {error}. Make metadata.annotations smaller "
        "(the API server allows 256 KiB in all).",
    )


def deployment_refused(
    world: World,
    index: int | None,
    deployment: dict[str, Any] | None,
    error: str,
    status: int,
) -> Plan:
    """A Deployment write was refused: the index-th of the plan's `apply` (None: the refusal
    came while deleting an orphan)."""
    message = (
        refusal_message(index, deployment, error, status)
        if index is not None and deployment is not None
        else f"install strategy failed: {error}"
    )
    if world.subscription and world.subscription_config:
        message += (
            f" The Deployment includes spec.config of Subscription "
            f"{world.subscription}: check it too."
        )
    return install_failed(world, message, forbidden=status == FORBIDDEN)


def resource_refused(world: World, obj: dict[str, Any] | None, error: str, status: int) -> Plan:
    """A write of the install's other objects (`Plan.resources`, or a deletion of
    `Plan.delete_resources` when `obj` is None) was refused: the install fails, as in OLM."""
    what = f"{obj['kind']} {obj['metadata']['name']}" if obj else "a resource"
    return install_failed(
        world,
        f"install strategy failed: could not write {what}: {error}",
        forbidden=status == FORBIDDEN,
    )
