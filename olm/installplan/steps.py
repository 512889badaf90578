"""InstallPlan steps for a resolved bundle (OLM v0 §5.3-5.4), pure.

Listing order is OLM's for inline bundles: the CSV, then CRDs, then everything else (the
bundle's own objects, then the RBAC generated from the CSV's permissions). Execution order is
a separate concern (`execution_order`): CRDs first, so they can become Established before
anything that needs them.

Generated RBAC, per ServiceAccount of `permissions`/`clusterPermissions` (listed in groups, one
per account: its ServiceAccount, Roles, RoleBindings, ClusterRoles, ClusterRoleBindings):
- the ServiceAccount (unless `default`), owned by the CSV, with no labels;
- per `permissions[]` entry a Role and RoleBinding `<csv>-<sa>-<hash>` (at most 63 characters),
  owned by the CSV, labelled with the olm.owner* keys and `olm.permissions.hash`;
- per `clusterPermissions[]` entry a ClusterRole and ClusterRoleBinding `<csv>-<hash>`, with the
  owner labels only (cluster-scoped objects cannot be owned by a namespaced CSV).
The CSV's UID is unknown until the plan creates it: owner references carry the name, and the
executor fills in the UID. As in OLM, the manifests carry no `olm.managed` label (the executor
adds it when it writes them) and status entries have no `optional` field.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.install.deployments import owner_labels
from olm.installplan.policy import CLUSTER_SCOPED_KINDS
from olm.installplan.stepref import BUNDLE_SECRET, SECRET

CSV_INFO = KINDS[Kind.CLUSTER_SERVICE_VERSION]
SUBSCRIPTION_INFO = KINDS[Kind.SUBSCRIPTION]
NAME_LIMIT = 63
PROPERTIES_ANNOTATION = "operatorframework.io/properties"
BUNDLE_OBJECT_PROPERTY = "olm.bundle.object"


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
                # OLM's synthetic step kind for a bundle's Secrets (any object of kind Secret,
                # whatever its group), which it writes as core Secrets (olm.installplan.stepref).
                "kind": BUNDLE_SECRET
                if self.manifest.get("kind") == SECRET
                else self.manifest.get("kind", ""),
                "name": self.manifest.get("metadata", {}).get("name", ""),
                "manifest": json.dumps(self.manifest, sort_keys=True, separators=(",", ":")),
            },
            "status": status,
        }


def rules_hash(value: Any) -> str:
    digest = hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    return digest[:10]


def csv_owner(csv_name: str) -> dict[str, Any]:
    """A non-blocking, non-controller ownerReference to CSV `csv_name` (uid filled in when
    the step is written)."""
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
    """The RBAC generated from the CSV's permissions, grouped per ServiceAccount as OLM lists
    it: the ServiceAccount, its Roles, RoleBindings, ClusterRoles, ClusterRoleBindings. OLM
    takes the accounts from a Go map (its order varies from plan to plan); olm-py takes them
    in the order the CSV first names them."""
    name = csv["metadata"]["name"]
    install = ((csv.get("spec") or {}).get("install") or {}).get("spec") or {}
    # OLM's step manifests carry the owner keys only; `olm.managed` is added when written.
    labels = {k: v for k, v in owner_labels(name, namespace).items() if k != Label.MANAGED}
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {}

    def group(account: str) -> dict[str, list[dict[str, Any]]]:
        kinds = ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
        return groups.setdefault(account, {kind: [] for kind in kinds})

    for entry in [*(install.get("permissions") or []), *(install.get("clusterPermissions") or [])]:
        account = entry.get("serviceAccountName", "")
        if account and account != "default" and account not in groups:
            group(account)["ServiceAccount"].append(
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {
                        "name": account,
                        "namespace": namespace,
                        "ownerReferences": [csv_owner(name)],
                    },
                }
            )
    for entry in install.get("permissions") or []:
        account, rules = entry.get("serviceAccountName", ""), entry.get("rules") or []
        role_name = _name(name, account, rules_hash(rules))
        role_labels = {**labels, Label.PERMISSIONS_HASH.value: rules_hash(rules)}
        group(account)["Role"].append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {
                    "name": role_name,
                    "namespace": namespace,
                    "labels": role_labels,
                    "ownerReferences": [csv_owner(name)],
                },
                "rules": rules,
            }
        )
        group(account)["RoleBinding"].append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {
                    "name": role_name,
                    "namespace": namespace,
                    "labels": role_labels,
                    "ownerReferences": [csv_owner(name)],
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
        group(account)["ClusterRole"].append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": role_name, "labels": role_labels},
                "rules": rules,
            }
        )
        group(account)["ClusterRoleBinding"].append(
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
    return [obj for kinds in groups.values() for objects in kinds.values() for obj in objects]


def go_json(value: Any) -> str:
    """`value` as Go's encoding/json writes it: compact, keys in their given order, UTF-8
    kept, and <, >, & escaped (HTML-safe)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text


def properties_annotation(properties: Sequence[Mapping[str, Any]] | None) -> str:
    """OLM's `operatorframework.io/properties` value: the bundle's properties as the catalog
    serves them (in their order, without `olm.bundle.object`, which opm never serves), as
    `{"properties":[{"type":...,"value":...}]}`."""
    served = [
        {"type": p.get("type"), "value": p.get("value")}
        for p in properties or []
        if p.get("type") != BUNDLE_OBJECT_PROPERTY
    ]
    return go_json({"properties": served or None})


def plan_bundle(
    objects: list[dict[str, Any]],
    namespace: str,
    source: tuple[str, str],
    replaces: str = "",
    properties: Sequence[Mapping[str, Any]] | None = None,
) -> list[Step]:
    """Steps for one bundle, in OLM's listing order; raises ValueError without a CSV.

    The CSV's `spec.replaces` is `replaces`, as OLM sets it (NewStepResourceFromBundle): the
    installed CSV it upgrades, else the catalog channel entry's replaces, never the bundle's own
    (none when empty); with `properties` (the catalog's properties of the
    bundle) the CSV gets OLM's `operatorframework.io/properties` annotation."""
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
        spec.pop("replaces", None)  # nothing to replace: OLM writes the catalog's (empty) edge
    if properties is not None:
        annotations = csv["metadata"].setdefault("annotations", {})
        annotations[PROPERTIES_ANNOTATION] = properties_annotation(properties)
    crds = [o for o in objects if o.get("kind") == "CustomResourceDefinition"]
    others = []
    for obj in objects:
        if obj.get("kind") in ("ClusterServiceVersion", "CustomResourceDefinition"):
            continue
        placed = copy.deepcopy(obj)
        meta = placed.setdefault("metadata", {})
        if obj.get("kind") in CLUSTER_SCOPED_KINDS:
            meta.pop("namespace", None)
        else:
            meta["namespace"] = namespace
        others.append(placed)
    ordered = [csv, *crds, *others, *rbac_for(csv, namespace)]
    return [Step(name, manifest, *source) for manifest in ordered]


def subscription_step(
    namespace: str, package: str, channel: str, source: tuple[str, str], csv: str
) -> Step:
    """The step that subscribes to a dependency the resolver chose and nobody subscribed to,
    as OLM's resolver adds it: named `<package>-<channel>-<catalog>-<catalog namespace>`,
    Automatic, starting at the chosen CSV (so its later upgrades follow the channel)."""
    manifest = {
        "apiVersion": SUBSCRIPTION_INFO.api_version,
        "kind": SUBSCRIPTION_INFO.kind.value,
        "metadata": {"name": "-".join((package, channel, *source)), "namespace": namespace},
        "spec": {
            "source": source[0],
            "sourceNamespace": source[1],
            "name": package,
            "channel": channel,
            "startingCSV": csv,
            "installPlanApproval": "Automatic",
        },
    }
    return Step(csv, manifest, *source)


def execution_order(steps: list[Step]) -> list[Step]:
    """CRDs first (they must be Established before the rest), then the listing order."""
    return sorted(
        steps, key=lambda step: 0 if step.manifest.get("kind") == "CustomResourceDefinition" else 1
    )
