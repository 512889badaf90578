"""Owned APIServices (`spec.apiservicedefinitions.owned`) as OLM v0 installs them
(install/apiservice.go, install/certresources.go, operators/olm/apiservices.go).

The Deployment named by `deploymentName` gets the certificate objects of olm.install.certresources
(Service `<deployment>-service` on `containerPort`, default 443; Secret, Role, RoleBinding,
auth-delegator and auth-reader bindings; the mounted certificate). Per definition, a
cluster-scoped `apiregistration.k8s.io/v1` APIService `<version>.<group>`: the Service,
`caBundle` = the Deployment's CA, `groupPriorityMinimum` 2000 and `versionPriority` 15 (OLM's
values), labels `olm.owner*` (no ownerReference can cross scopes, so the csv-cleanup finalizer
deletes it by label).

Invariants: pure (plain dicts in, plain dicts and messages out); the same inputs render the
same objects; messages name the APIService and what to do.
"""

from __future__ import annotations

import base64
from typing import Any

from olm.api import body
from olm.api.conditions import find_condition
from olm.api.csv import CsvPhase
from olm.api.kinds import Kind
from olm.api.labels import Label
from olm.install.certresources import (
    MANAGED,
    container_port,
    owned_apiservice_definitions,
    owned_by,
    owner_label_set,
    secret_name,
    service_name,
)
from olm.install.certs import ServingMaterial

API_REGISTRATION = "apiregistration.k8s.io/v1"
APISERVICE_KIND = "APIService"
GROUP_PRIORITY_MINIMUM = 2000  # OLM createOrUpdateAPIService
VERSION_PRIORITY = 15


def apiservice_name(desc: dict[str, Any]) -> str:
    return f"{desc.get('version', '')}.{desc.get('group', '')}"


def names(csv: dict[str, Any]) -> list[str]:
    return [apiservice_name(d) for d in owned_apiservice_definitions(csv)]


def render(csv: dict[str, Any], desc: dict[str, Any], ca_pem: bytes) -> dict[str, Any]:
    return {
        "apiVersion": API_REGISTRATION,
        "kind": APISERVICE_KIND,
        "metadata": {"name": apiservice_name(desc), "labels": {**MANAGED, **owner_label_set(csv)}},
        "spec": {
            "group": desc.get("group", ""),
            "version": desc.get("version", ""),
            "groupPriorityMinimum": GROUP_PRIORITY_MINIMUM,
            "versionPriority": VERSION_PRIORITY,
            "service": {
                "namespace": csv["metadata"]["namespace"],
                "name": service_name(desc.get("deploymentName", "")),
                "port": container_port(desc),
            },
            "caBundle": base64.b64encode(ca_pem).decode(),
        },
    }


def render_all(csv: dict[str, Any], materials: dict[str, ServingMaterial]) -> list[dict[str, Any]]:
    """The APIServices to apply, each with its Deployment's CA."""
    return [
        render(csv, desc, materials[desc["deploymentName"]].ca_pem)
        for desc in owned_apiservice_definitions(csv)
        if desc.get("deploymentName") in materials
    ]


def adoption_problem(
    csv: dict[str, Any],
    apiservices: dict[str, dict[str, Any] | None],
    csvs: dict[str, dict[str, Any]],
) -> str | None:
    """OLM IsAPIServiceAdoptable: an existing APIService may be taken over only from this CSV,
    the CSV it replaces, or an owner CSV that is Replacing or Deleting. olm-py also takes over
    one whose owner CSV is gone (OLM deletes such orphans first, then creates it anew)."""
    meta = csv["metadata"]
    replaces = (csv.get("spec") or {}).get("replaces")
    for name in names(csv):
        existing = apiservices.get(name)
        if existing is None:
            continue
        labels = body.labels(existing)
        owner = labels.get(Label.OWNER)
        owner_namespace = labels.get(Label.OWNER_NAMESPACE)
        owner_kind = labels.get(Label.OWNER_KIND)
        if not owner or not owner_namespace or owner_kind != Kind.CLUSTER_SERVICE_VERSION:
            return (
                f"unable to adopt APIService {name}: it exists and no ClusterServiceVersion owns "
                "it (no olm.owner labels); delete it so that this operator can create its own"
            )
        if owner_namespace != meta["namespace"]:
            return (
                f"unable to adopt APIService {name}: it is owned by ClusterServiceVersion "
                f"{owner_namespace}/{owner}; uninstall that operator first"
            )
        if owner in (meta["name"], replaces):
            continue
        current = csvs.get(owner)
        phase = (current or {}).get("status", {}).get("phase") if current else None
        if current is None or phase in (CsvPhase.REPLACING, CsvPhase.DELETING):
            continue
        return (
            f"unable to adopt APIService {name}: it is owned by ClusterServiceVersion "
            f"{owner_namespace}/{owner}; uninstall that operator first"
        )
    return None


def resource_issue(
    csv: dict[str, Any],
    apiservices: dict[str, dict[str, Any] | None],
    materials: dict[str, ServingMaterial],
) -> str | None:
    """An owned APIService missing or not as installed (OLM checkAPIServiceResources), or None."""
    for desc in owned_apiservice_definitions(csv):
        name = apiservice_name(desc)
        existing = apiservices.get(name)
        if existing is None:
            return f"APIService {name} not found"
        material = materials.get(desc.get("deploymentName", ""))
        if material is None:
            return f"no serving certificate for APIService {name}"
        want = render(csv, desc, material.ca_pem)
        spec = existing.get("spec") or {}
        if not owned_by(existing, csv):
            return f"APIService {name} is not labelled as owned by this ClusterServiceVersion"
        if spec.get("service") != want["spec"]["service"]:
            return f"APIService {name} does not point at Service {want['spec']['service']['name']}"
        if spec.get("caBundle") != want["spec"]["caBundle"]:
            return f"APIService {name} caBundle does not match the serving certificate's CA"
    return None


def availability(apiservice: dict[str, Any] | None) -> tuple[bool, str | None]:
    """Whether the aggregator reports the APIService Available=True, and the condition's
    message (else its reason); (False, None) when the aggregator has not checked it yet."""
    conditions = ((apiservice or {}).get("status") or {}).get("conditions") or []
    available = find_condition(conditions, "Available")
    if available is None:
        return False, None
    detail = str(available.get("message") or available.get("reason") or "")
    return available.get("status") == "True", detail


def unavailable(csv: dict[str, Any], apiservices: dict[str, dict[str, Any] | None]) -> str | None:
    """OLM areAPIServicesAvailable: the first owned APIService not Available=True, or None."""
    for name in names(csv):
        ok, detail = availability(apiservices.get(name))
        if not ok:
            return f"APIService {name} is not Available" + (f": {detail}" if detail else "")
    return None


def orphaned_apiservices(namespace: str, name: str, apiservices: list[dict[str, Any]]) -> list[str]:
    """The APIServices labelled as owned by ClusterServiceVersion `namespace/name`, which is
    gone: OLM's syncAPIService deletes them (its owner's namespace or CSV is not found)."""
    gone = {"metadata": {"name": name, "namespace": namespace}}
    return sorted(body.name(a) for a in apiservices if owned_by(a, gone))


KUBE_SYSTEM = "kube-system"
RBAC_API = "rbac.authorization.k8s.io/v1"


def legacy_resources(csv: dict[str, Any]) -> list[tuple[str, str, str | None, str]]:
    """The objects older OLM releases made for each owned APIService under names taken from
    the APIService's (`<version>.<group>`): OLM v0.38 deletes each one that is labelled as this
    CSV's (`legacy_removable`) once it has written the APIService. Its Service is skipped when
    its name is the one the CSV's current Service has."""
    namespace = csv["metadata"]["namespace"]
    refs: list[tuple[str, str, str | None, str]] = []
    for desc in owned_apiservice_definitions(csv):
        name = apiservice_name(desc)
        service = name.replace(".", "-")
        if service != service_name(desc.get("deploymentName", "")):
            refs.append(("v1", "Service", namespace, service))
        refs += [
            ("v1", "Secret", namespace, secret_name(name)),
            (RBAC_API, "Role", namespace, secret_name(name)),
            (RBAC_API, "RoleBinding", namespace, secret_name(name)),
            (RBAC_API, "ClusterRoleBinding", None, f"{name}-system:auth-delegator"),
            (RBAC_API, "RoleBinding", KUBE_SYSTEM, f"{name}-auth-reader"),
        ]
    return refs


def legacy_removable(obj: dict[str, Any], csv: dict[str, Any]) -> bool:
    """Whether a legacy object found is this CSV's to delete: labelled as owned by it."""
    return owned_by(obj, csv)
