"""Install health: whether what runs in the cluster is the install `olm.install.render` would
write, and ready (OLM v0 install/deployment.go CheckInstalled, operators/olm/apiservices.go
areAPIServicesAvailable, areWebhooksAvailable).

Invariants:
- Pure: the rendered Deployments are compared with the observed ones (olm.install.deployments
  `check_health`); then, for a CSV with webhooks or owned APIServices, every owned APIService
  must be installed and Available, every webhook configuration present as declared and (unless
  asked not to) every conversion pointed at its webhook.
- The first problem found is the message; the Deployments' own verdict comes first.
"""

from __future__ import annotations

from typing import Any

from olm.api.views import Strategy
from olm.install.apiservices import resource_issue, unavailable
from olm.install.certs import ServingMaterial
from olm.install.conversion import conversion_patches
from olm.install.deployments import Health, check_health
from olm.install.render import InstallContext, needs_certificates, render_deployments
from olm.install.webhooks import missing

__all__ = ["Health", "install_health"]


def install_health(
    csv: dict[str, Any],
    strategy: Strategy,
    context: InstallContext,
    materials: dict[str, ServingMaterial] | None = None,
    *,
    conversions: bool = True,
) -> Health:
    """The install's health; `conversions=False` leaves CRD conversion out of the judgement."""
    wanted = render_deployments(csv, strategy, context.subscription_config, materials)
    health = check_health(wanted, context.deployments)
    if not health.healthy or context.webhooks is None or not needs_certificates(csv, context):
        return health
    webhooks = context.webhooks
    # OLM areAPIServicesAvailable: every owned APIService installed and Available.
    apiservice = resource_issue(csv, webhooks.apiservices, materials or {}) or (
        unavailable(csv, webhooks.apiservices)
    )
    if apiservice is not None:
        return Health(False, message=f"APIServices not installed: {apiservice}")
    # OLM areWebhooksAvailable: every configuration present as declared, conversions set.
    absent = missing(csv, context.group, webhooks, materials or {})
    if absent is None and conversions:
        pending = conversion_patches(csv, context.crds, materials or {})
        if pending:
            absent = (
                f"the conversion of CustomResourceDefinition {pending[0]['metadata']['name']} "
                "does not point at the webhook"
            )
    if absent is not None:
        return Health(False, message=f"Webhooks not installed: {absent}")
    return health
