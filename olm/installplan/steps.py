"""InstallPlan steps for a resolved bundle (OLM v0 §5.3-5.4), pure.

Listing order is OLM's for inline bundles: the CSV, then CRDs, then everything else (the
bundle's own objects, then the RBAC generated from the CSV's permissions). Execution order is
a separate concern (`execution_order`): CRDs first, so they can become Established before
anything that needs them.

Generated RBAC, per ServiceAccount of `permissions`/`clusterPermissions`:
- the ServiceAccount (unless `default`), owned by the CSV;
- per `permissions[]` entry a Role and RoleBinding `<csv>-<sa>-<hash>` (at most 63 characters),
  owned by the CSV, labelled with the olm.owner* keys and `olm.permissions.hash`;
- per `clusterPermissions[]` entry a ClusterRole and ClusterRoleBinding `<csv>-<hash>`, with the
  owner labels only (cluster-scoped objects cannot be owned by a namespaced CSV).
The CSV's UID is unknown until the plan creates it: owner references carry the name, and the
executor fills in the UID.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.install.deployments import owner_labels

CSV_INFO = KINDS[Kind.CLUSTER_SERVICE_VERSION]
NAME_LIMIT = 63


@dataclass(frozen=True)
class Step:
    resolving: str
    manifest: dict[str, Any]
    source_name: str
    source_namespace: str

    def status_entry(self, status: str = "Unknown") -> dict[str, Any]:
        api_version = self.manifest.get("apiVersion", "")
        group, _, version = api_version.rpartition("/")
        return {
            "resolving": self.resolving,
            "resource": {
                "sourceName": self.source_name,
                "sourceNamespace": self.source_namespace,
                "group": group,
                "version": version,
                "kind": self.manifest.get("kind", ""),
                "name": self.manifest.get("metadata", {}).get("name", ""),
                "manifest": json.dumps(self.manifest, sort_keys=True, separators=(",", ":")),
            },
            "optional": False,
            "status": status,
        }


def rules_hash(value: Any) -> str:
    digest = hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    return digest[:10]


def _owner(csv_name: str) -> dict[str, Any]:
    return {
        "apiVersion": CSV_INFO.api_version,
        "kind": CSV_INFO.kind.value,
        "name": csv_name,
        "uid": "",
        "controller": False,
        "blockOwnerDeletion": False,
    }


def _name(*parts: str) -> str:
    name = "-".join(parts)
    return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 11] + "-" + rules_hash(name)


def rbac_for(csv: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    name = csv["metadata"]["name"]
    install = ((csv.get("spec") or {}).get("install") or {}).get("spec") or {}
    labels = dict(owner_labels(name, namespace))
    objects: list[dict[str, Any]] = []
    accounts: list[str] = []
    for entry in [*(install.get("permissions") or []), *(install.get("clusterPermissions") or [])]:
        account = entry.get("serviceAccountName", "")
        if account and account != "default" and account not in accounts:
            accounts.append(account)
    for account in accounts:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {
                    "name": account,
                    "namespace": namespace,
                    "labels": {Label.MANAGED.value: "true"},
                    "ownerReferences": [_owner(name)],
                },
            }
        )
    for entry in install.get("permissions") or []:
        account, rules = entry.get("serviceAccountName", ""), entry.get("rules") or []
        role_name = _name(name, account, rules_hash(rules))
        role_labels = {**labels, Label.PERMISSIONS_HASH.value: rules_hash(rules)}
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {
                    "name": role_name,
                    "namespace": namespace,
                    "labels": role_labels,
                    "ownerReferences": [_owner(name)],
                },
                "rules": rules,
            }
        )
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {
                    "name": role_name,
                    "namespace": namespace,
                    "labels": role_labels,
                    "ownerReferences": [_owner(name)],
                },
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": role_name,
                },
                "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            }
        )
    for entry in install.get("clusterPermissions") or []:
        account, rules = entry.get("serviceAccountName", ""), entry.get("rules") or []
        role_name = _name(name, rules_hash([account, rules]))
        role_labels = {**labels, Label.PERMISSIONS_HASH.value: rules_hash(rules)}
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": role_name, "labels": role_labels},
                "rules": rules,
            }
        )
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": role_name, "labels": role_labels},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role_name,
                },
                "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            }
        )
    return objects


def plan_bundle(
    objects: list[dict[str, Any]], namespace: str, source: tuple[str, str], replaces: str = ""
) -> list[Step]:
    """Steps for one bundle, in OLM's listing order; raises ValueError without a CSV."""
    csv = next(
        (copy.deepcopy(o) for o in objects if o.get("kind") == "ClusterServiceVersion"), None
    )
    if csv is None:
        raise ValueError("the bundle has no ClusterServiceVersion")
    name = csv["metadata"]["name"]
    csv["metadata"]["namespace"] = namespace
    spec = csv.setdefault("spec", {})
    if replaces:
        spec["replaces"] = replaces  # the resolver's upgrade edge wins, as in OLM
    else:
        spec.pop("replaces", None)
    crds = [o for o in objects if o.get("kind") == "CustomResourceDefinition"]
    others = []
    for obj in objects:
        if obj.get("kind") in ("ClusterServiceVersion", "CustomResourceDefinition"):
            continue
        placed = copy.deepcopy(obj)
        placed.setdefault("metadata", {})["namespace"] = namespace
        others.append(placed)
    ordered = [csv, *crds, *others, *rbac_for(csv, namespace)]
    return [Step(name, manifest, *source) for manifest in ordered]


def execution_order(steps: list[Step]) -> list[Step]:
    """CRDs first (they must be Established before the rest), then the listing order."""
    return sorted(
        steps, key=lambda step: 0 if step.manifest.get("kind") == "CustomResourceDefinition" else 1
    )
