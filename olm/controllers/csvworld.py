"""The CSV controller's snapshot: the `olm.csv.plan.World` of one CSV.

Most of it comes from the Store (the namespace's OperatorGroups, CSVs, Deployments,
Subscriptions, OperatorConditions; CRDs, ServiceAccounts and RBAC); what the Store does not
cache is read live through the gateway: the APIServices a CSV requires or owns, the webhook
Secrets and configurations labelled as the CSV's, the server's version and served kinds.

Invariants: reads only, never writes; the clock is the caller's (`now`), so tests can set it.
"""

from __future__ import annotations

import datetime
import urllib.parse
from typing import Any

from olm.api.labels import Label
from olm.controllers.store import Store, StoreKind
from olm.csv.plan import GroupApiCheck, World
from olm.csv.rbac import RbacSnapshot
from olm.csv.requirements import RequirementInputs
from olm.install.apiservices import API_REGISTRATION, APISERVICE_KIND
from olm.install.apiservices import names as apiservice_names
from olm.install.certresources import WebhookWorld, has_cert_resources, owned_by, secret_names
from olm.install.certs import CertSettings
from olm.install.webhooks import ADMISSION_API, CONFIG_KINDS
from olm.kube.errors import NotFound
from olm.kube.protocol import KubeGateway
from olm.scope.conflicts import decide_provided_apis, recovery


def _required_apiservices(gateway: KubeGateway, required: list[Any]) -> dict[str, dict[str, Any]]:
    """The APIServices a CSV requires, read by name: the cache holds only olm.managed
    ones, and a required API (PackageManifests, metrics.k8s.io) is rarely OLM's own."""
    found: dict[str, dict[str, Any]] = {}
    for wanted in required:
        if not isinstance(wanted, dict):
            continue
        if not wanted.get("version") or not wanted.get("group"):
            continue  # no APIService to read: the requirement says NotPresent
        name = f"{wanted['version']}.{wanted['group']}"
        try:
            found[name] = gateway.get(API_REGISTRATION, APISERVICE_KIND, None, name)
        except NotFound:
            continue
    return found


def read_world(
    store: Store, gateway: KubeGateway, csv: dict[str, Any], now: datetime.datetime
) -> World:
    """The World of one CSV: its namespace from the cache, what the cache does not hold read
    live (required and owned APIServices, webhook Secrets and configurations, the server)."""
    namespace = csv["metadata"]["namespace"]
    groups = store.items(StoreKind.OPERATOR_GROUP, namespace)
    targets = None
    if len(groups) == 1 and (groups[0].get("status") or {}).get("lastUpdated"):
        targets = list((groups[0].get("status") or {}).get("namespaces") or [])
    required_apis = ((csv.get("spec") or {}).get("apiservicedefinitions") or {}).get("required")
    needs_discovery = bool((csv.get("spec") or {}).get("nativeAPIs") or required_apis)
    requirements = RequirementInputs(
        crds={c["metadata"]["name"]: c for c in store.items(StoreKind.CRD)},
        service_accounts={
            s["metadata"]["name"]: s for s in store.items(StoreKind.SERVICE_ACCOUNT, namespace)
        },
        rbac=RbacSnapshot(
            roles={r["metadata"]["name"]: r for r in store.items(StoreKind.ROLE, namespace)},
            role_bindings=store.items(StoreKind.ROLE_BINDING, namespace),
            cluster_roles={r["metadata"]["name"]: r for r in store.items(StoreKind.CLUSTER_ROLE)},
            cluster_role_bindings=store.items(StoreKind.CLUSTER_ROLE_BINDING),
        ),
        server_version=gateway.server_version(),
        served_kinds=gateway.served_kinds() if needs_discovery else frozenset(),
        apiservices=_required_apiservices(gateway, required_apis or []),
    )
    replaces = (csv.get("spec") or {}).get("replaces")
    subscription = subscription_of(store, csv)
    return World(
        csv=csv,
        operator_groups=groups,
        group_targets=targets,
        csvs={c["metadata"]["name"]: c for c in store.items(StoreKind.CSV, namespace)},
        requirements=requirements,
        deployments={
            d["metadata"]["name"]: d for d in store.items(StoreKind.DEPLOYMENT, namespace)
        },
        replaced_condition=store.get(StoreKind.OPERATOR_CONDITION, namespace, replaces)
        if replaces
        else None,
        now=now,
        subscription=subscription["metadata"]["name"] if subscription else None,
        subscription_config=(subscription.get("spec") or {}).get("config")
        if subscription
        else None,
        webhooks=_webhook_world(gateway, csv) if has_cert_resources(csv) else None,
        api_check=_api_check(store, csv, groups),
    )


def _api_check(
    store: Store, csv: dict[str, Any], groups: list[dict[str, Any]]
) -> GroupApiCheck | None:
    """The provided-API check between OperatorGroups (olm.scope.conflicts)."""
    if len(groups) != 1 or not (groups[0].get("status") or {}).get("lastUpdated"):
        return None
    decision = decide_provided_apis(csv, groups[0], store.items(StoreKind.OPERATOR_GROUP))
    return GroupApiCheck(
        failure=decision.failure,
        remove_deployments=decision.remove_deployments,
        provided_apis=decision.provided_apis,
        stop=decision.stop,
        recovery=recovery(csv),
    )


def _webhook_world(gateway: KubeGateway, csv: dict[str, Any]) -> WebhookWorld:
    """Live reads (these kinds are not cached): the webhook Secrets and the webhook
    configurations labelled as this CSV's."""
    namespace = csv["metadata"]["namespace"]
    secrets: dict[str, dict[str, Any] | None] = {}
    for name in secret_names(csv):
        try:
            secrets[name] = gateway.get("v1", "Secret", namespace, name)
        except NotFound:
            secrets[name] = None
    configs = []
    meta = csv["metadata"]
    selector = urllib.parse.urlencode(
        {
            "labelSelector": f"{Label.OWNER.value}={meta['name']},{Label.OWNER_NAMESPACE.value}={namespace}"
        }
    )
    for kind in CONFIG_KINDS.values():
        plural = kind.lower() + "s"
        for item in gateway.list_path(f"/apis/{ADMISSION_API}/{plural}?{selector}"):
            if owned_by(item, csv):  # the selector narrows the list; the full check is here
                configs.append({**item, "apiVersion": ADMISSION_API, "kind": kind})
    apiservices: dict[str, dict[str, Any] | None] = {}
    for name in apiservice_names(csv):
        try:
            apiservices[name] = gateway.get(API_REGISTRATION, APISERVICE_KIND, None, name)
        except NotFound:
            apiservices[name] = None
    return WebhookWorld(secrets, configs, CertSettings.from_env(), apiservices)


def subscription_of(store: Store, csv: dict[str, Any]) -> dict[str, Any] | None:
    """The Subscription whose status.installedCSV (as OLM) or currentCSV names the CSV."""
    meta = csv["metadata"]
    found = None
    for sub in sorted(
        store.items(StoreKind.SUBSCRIPTION, meta["namespace"]),
        key=lambda s: s["metadata"]["name"],
    ):
        status = sub.get("status") or {}
        if status.get("installedCSV") == meta["name"]:
            return sub
        if found is None and status.get("currentCSV") == meta["name"]:
            found = sub
    return found
