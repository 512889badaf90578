"""Registry NetworkPolicies, written: the I/O half of olm.catalogsource.policies.

The CatalogSource controller calls `keep_policies` at each reconcile of a live, trusted
CatalogSource. It reads the policies of the catalog's namespace from the store (they are
watched, olm.managed ones: a deleted or edited policy wakes its CatalogSource through its
`olm.catalogSource` label), asks the pure `policy_actions` what to do, and creates (after a
delete, for one that differs) what is missing, as OLM's registry reconciler does.

Invariants: no read of the API server (the store has them); a policy the store has not seen yet
(409 on create) is left for the watch event that brings it; a failure is logged once per cause
and never stops the catalog from being read and reported.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.catalogsource.policies import NETWORK_POLICY_API_VERSION, policy_actions
from olm.controllers.store import Store, StoreKind
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway

log = logging.getLogger("olm.catalogsource")


def keep_policies(
    store: Store, gateway: KubeGateway, source: Mapping[str, Any], said: set[str]
) -> None:
    """Make the CatalogSource's registry NetworkPolicies as OLM keeps them (`said`: the
    warnings already logged, so each cause is logged once)."""
    namespace = body.namespace(source)
    found = {body.name(p): p for p in store.items(StoreKind.NETWORK_POLICY, namespace)}
    for action in policy_actions(source, found):
        name = action.policy["metadata"]["name"]
        try:
            if action.replace:
                with contextlib.suppress(NotFound):
                    gateway.delete(NETWORK_POLICY_API_VERSION, "NetworkPolicy", namespace, name)
            gateway.create(action.policy)
            log.info("NetworkPolicy %s/%s written for its catalog registry", namespace, name)
        except Conflict:
            continue  # made meanwhile (or the store lags): its watch event wakes us again
        except GatewayError as exc:
            cause = f"NetworkPolicy {namespace}/{name} of catalog {body.name(source)}: {exc}"
            if cause not in said:
                said.add(cause)
                log.warning("%s not written", cause)
