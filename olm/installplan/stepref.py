"""A step of an InstallPlan's `status.plan`: the object it writes, read as OLM reads it.

- `step_manifest(entry)`: the step's manifest (JSON in `resource.manifest`), or None when the
  entry holds no Kubernetes object. As OLM does, a manifest without `apiVersion`/`kind` takes
  them from the step's resource, and kinds OLM writes with typed clients are in their own API
  group whatever the manifest's `apiVersion` says.
- A manifest of kind `Secret` (step kind `BundleSecret`), whatever its group, is a core v1
  Secret, as OLM decodes it: fields a Secret does not have are dropped.
- `step_ref(manifest)`: (apiVersion, kind, namespace or "", name), how a step's object is read.
- `owner_csvs(manifest, namespace)`: the CSVs a step names as owners without a uid.

Invariant: pure; the status entry is never changed (a copy is returned).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.kinds import GROUP as KIND_GROUP
from olm.api.kinds import KINDS, Kind
from olm.installplan.policy import CLUSTER_SCOPED_KINDS

CSV_KIND = KINDS[Kind.CLUSTER_SERVICE_VERSION].kind.value
CSV_API_VERSION = KINDS[Kind.CLUSTER_SERVICE_VERSION].api_version
CRD_KIND = "CustomResourceDefinition"
SECRET = "Secret"
BUNDLE_SECRET = "BundleSecret"  # OLM's step kind for a bundle's Secrets
# What OLM keeps of a bundle object of kind Secret: it decodes the manifest into a core v1
# Secret, so any other field (a custom resource's `spec`) is dropped.
SECRET_FIELDS = ("kind", "metadata", "data", "stringData", "type", "immutable")
Ref = tuple[str, str, str, str]  # (apiVersion, kind, namespace or "", name) of a step's object

# The group of each kind OLM's ExecutePlan writes with a typed client (and so in that group
# whatever the step manifest's apiVersion says).
TYPED_STEP_GROUPS: dict[str, str] = {
    **{kind.value: KIND_GROUP for kind in (Kind.CLUSTER_SERVICE_VERSION, Kind.SUBSCRIPTION)},
    **dict.fromkeys(
        ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), "rbac.authorization.k8s.io"
    ),
    CRD_KIND: "apiextensions.k8s.io",
}


def step_manifest(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object a status.plan entry writes, or None when the entry does not hold one."""
    resource = entry.get("resource")
    if not isinstance(resource, Mapping):
        return None
    try:
        manifest = json.loads(resource.get("manifest") or "")
    except (TypeError, ValueError):
        return None
    if isinstance(manifest, dict):
        # OLM reads a step's kind and version from the step's resource, not its manifest (a
        # manifest serialized without its TypeMeta has neither).
        group, version = str(resource.get("group") or ""), str(resource.get("version") or "")
        if not manifest.get("kind") and resource.get("kind"):
            kind = str(resource["kind"])
            manifest["kind"] = SECRET if kind == BUNDLE_SECRET else kind
        if not manifest.get("apiVersion") and version:
            manifest["apiVersion"] = (
                f"{group}/{version}" if group and "/" not in version else version
            )
    if (
        not isinstance(manifest, dict)
        or not manifest.get("kind")
        or not manifest.get("apiVersion")
        or not isinstance(manifest.get("metadata"), dict)
        or not manifest["metadata"].get("name")
    ):
        return None
    if manifest["kind"] == SECRET:
        # OLM writes every bundle object of kind Secret, whatever its group, as a core Secret
        # (ecr-secret-operator ships a custom resource of kind Secret: OLM writes a Secret).
        return {**{k: manifest[k] for k in SECRET_FIELDS if k in manifest}, "apiVersion": "v1"}
    typed = TYPED_STEP_GROUPS.get(str(manifest["kind"]))
    if typed and "/" not in str(manifest["apiVersion"]):
        # OLM writes these kinds with typed clients, which ignore the manifest's apiVersion:
        # a catalog's CSV of `apiVersion: v1alpha1` installs (OLM's e2e catalogs have them).
        manifest["apiVersion"] = f"{typed}/{manifest['apiVersion']}"
    return manifest


def owner_csvs(manifest: Mapping[str, Any], plan_namespace: str) -> list[Ref]:
    """The refs of the CSVs a step names as owners without a uid (filled in when written)."""
    meta = body.meta(manifest)
    namespace = str(meta.get("namespace") or plan_namespace)
    return [
        (CSV_API_VERSION, CSV_KIND, namespace, str(owner.get("name", "")))
        for owner in meta.get("ownerReferences") or []
        if owner.get("kind") == CSV_KIND and not owner.get("uid") and owner.get("name")
    ]


def step_ref(manifest: Mapping[str, Any]) -> Ref:
    """(apiVersion, kind, namespace, name); a cluster-scoped kind has no namespace, whatever
    its manifest says (plans written before step manifests dropped it carried one)."""
    meta = body.meta(manifest)
    kind = str(manifest.get("kind", ""))
    return (
        str(manifest.get("apiVersion", "")),
        kind,
        "" if kind in CLUSTER_SCOPED_KINDS else str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
    )
