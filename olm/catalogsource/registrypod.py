"""Registry pods (opt-in: `olm run --registry-image IMAGE`): the Pod OLM v0.38's catalog operator
runs for a ConfigMap CatalogSource, and its ServiceAccount and read-only RBAC, made with
olm-py's own image.

OLM serves a ConfigMap catalog from a pod of its configmap-server image; olm-py's pod runs
`olm configmap-server -c <configmap> -n <namespace> --grpc-port=50051` from olm-py's
image, which reads the ConfigMap as the pod's ServiceAccount and serves it over
operator-registry's gRPC API (and gRPC health) on port 50051, as OLM's does. As under OLM:
- Pod `generateName: <catalog>-` in the catalog's namespace, controlled by the CatalogSource,
  labelled `olm.catalogSource: <name>`, `olm.managed: "true"`, `olm.configMapResourceVersion:
  <the ConfigMap's resourceVersion it serves>` and `olm.pod-spec-hash`; the catalog's
  annotations and `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`; container
  `configmap-registry-server`, port `grpc` 50051 with gRPC readiness/liveness/startup probes,
  requests 10m CPU and 50Mi; node selector `kubernetes.io/os: linux`;
- `spec.grpcPodConfig`: `nodeSelector`, `priorityClassName`, `tolerations` and `affinity`
  replace the defaults, `securityContextConfig: restricted` adds the restricted pod security
  context; the annotation `operatorframework.io/priorityclass` sets the priority class;
- ServiceAccount `<catalog>-configmap-server`, Role `<catalog>-configmap-reader` (get on that
  one ConfigMap), RoleBinding `<catalog>-server-configmap-reader`, owned by the CatalogSource.

Invariants: pure; a pod is kept while its labels name the wanted ConfigMap version and spec
hash (`pod_actions`), else replaced: a new ConfigMap version rolls the pod, as OLM does; at
most one pod is kept, the others deleted; a deleted pod is made again.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.catalogsource import (
    REGISTRY_PORT,
    REGISTRY_PORT_NAME,
    SecurityConfig,
)
from olm.api.kinds import KINDS, Kind
from olm.api.labels import MANAGED_VALUE, Label
from olm.api.views import owner_reference
from olm.catalogsource.policies import CONFIGMAP_RV_LABEL, registry_pod_labels

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
POD_SPEC_HASH_LABEL = "olm.pod-spec-hash"
PRIORITY_CLASS_ANNOTATION = "operatorframework.io/priorityclass"
SAFE_TO_EVICT_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict"
CONTAINER_NAME = "configmap-registry-server"
DEFAULT_NODE_SELECTOR = {"kubernetes.io/os": "linux"}
# OLM's catalog operator runs restricted registry pods as this user (--create-pod-as-user).
RUN_AS_USER = 1001
SERVER_SUFFIX = "-configmap-server"
READER_SUFFIX = "-configmap-reader"
BINDING_SUFFIX = "-server-configmap-reader"
RBAC_API = "rbac.authorization.k8s.io/v1"


def serves_configmap(source: Mapping[str, Any]) -> str | None:
    """The ConfigMap a registry pod of this CatalogSource serves, or None (not such a source)."""
    spec = source.get("spec") or {}
    if spec.get("sourceType") not in ("configmap", "internal"):
        return None
    name = spec.get("configMap")
    return str(name) if name else None


def _probe() -> dict[str, Any]:
    return {"grpc": {"port": REGISTRY_PORT}, "timeoutSeconds": 5}


def _pod_spec(source: Mapping[str, Any], image: str, configmap: str) -> dict[str, Any]:
    namespace, name = body.namespace(source), body.name(source)
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": image,
        "command": ["olm"],
        "args": [
            "configmap-server",
            "-c",
            configmap,
            "-n",
            namespace,
            f"--grpc-port={REGISTRY_PORT}",
        ],
        "ports": [{"name": REGISTRY_PORT_NAME, "containerPort": REGISTRY_PORT}],
        "readinessProbe": {**_probe(), "initialDelaySeconds": 5},
        "livenessProbe": {**_probe(), "initialDelaySeconds": 5},
        "startupProbe": {**_probe(), "failureThreshold": 10, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
        "securityContext": {"readOnlyRootFilesystem": False},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "nodeSelector": dict(DEFAULT_NODE_SELECTOR),
        "serviceAccountName": name + SERVER_SUFFIX,
    }
    config = (source.get("spec") or {}).get("grpcPodConfig") or {}
    if config.get("nodeSelector") is not None:
        spec["nodeSelector"] = dict(config["nodeSelector"])
    if config.get("priorityClassName") is not None:
        spec["priorityClassName"] = config["priorityClassName"]
    if config.get("tolerations") is not None:
        spec["tolerations"] = copy.deepcopy(config["tolerations"])
    if config.get("affinity") is not None:
        spec["affinity"] = copy.deepcopy(config["affinity"])
    if config.get("securityContextConfig") == SecurityConfig.RESTRICTED:
        spec["securityContext"] = {
            "seccompProfile": {"type": "RuntimeDefault"},
            "runAsUser": RUN_AS_USER,
            "runAsNonRoot": True,
        }
        container["securityContext"] = {
            "readOnlyRootFilesystem": False,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }
    priority = body.annotations(source).get(PRIORITY_CLASS_ANNOTATION)
    if priority:
        spec["priorityClassName"] = priority
    return spec


def spec_hash(spec: Mapping[str, Any]) -> str:
    """A short, stable digest of a pod spec (a label value: at most 63 characters)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def registry_pod(source: Mapping[str, Any], image: str) -> dict[str, Any] | None:
    """The registry Pod OLM would run for this CatalogSource, with olm-py's `image`; None when
    it is not a ConfigMap catalog (or its ConfigMap was not read yet)."""
    configmap = serves_configmap(source)
    version = ((source.get("status") or {}).get("configMapReference") or {}).get("resourceVersion")
    if configmap is None or not version:
        return None
    spec = _pod_spec(source, image, configmap)
    labels = {**registry_pod_labels(source), POD_SPEC_HASH_LABEL: spec_hash(spec)}
    annotations = {**body.annotations(source), SAFE_TO_EVICT_ANNOTATION: "true"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": body.name(source) + "-",
            "namespace": body.namespace(source),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(source, controller=True, kind=CATALOG_SOURCE)],
        },
        "spec": spec,
    }


def registry_access(source: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ServiceAccount of the registry pod, and the Role and RoleBinding that let it read
    its ConfigMap (and nothing else); [] when the source is not a ConfigMap catalog."""
    configmap = serves_configmap(source)
    if configmap is None:
        return []
    namespace, name = body.namespace(source), body.name(source)
    managed = {Label.MANAGED.value: MANAGED_VALUE}

    def meta(object_name: str) -> dict[str, Any]:
        return {
            "name": object_name,
            "namespace": namespace,
            "labels": dict(managed),
            "ownerReferences": [owner_reference(source, kind=CATALOG_SOURCE)],
        }

    account = name + SERVER_SUFFIX
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(account)},
        {
            "apiVersion": RBAC_API,
            "kind": "Role",
            "metadata": meta(name + READER_SUFFIX),
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "verbs": ["get"],
                    "resourceNames": [configmap],
                }
            ],
        },
        {
            "apiVersion": RBAC_API,
            "kind": "RoleBinding",
            "metadata": meta(name + BINDING_SUFFIX),
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": name + READER_SUFFIX,
            },
        },
    ]


@dataclass(frozen=True)
class PodActions:
    """Create `create` (when not None), delete the pods named in `delete`."""

    create: dict[str, Any] | None = None
    delete: list[str] = field(default_factory=list)


def _current(pod: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    labels, want = body.labels(pod), body.labels(wanted)
    return (
        not body.meta(pod).get("deletionTimestamp")
        and labels.get(CONFIGMAP_RV_LABEL) == want.get(CONFIGMAP_RV_LABEL)
        and labels.get(POD_SPEC_HASH_LABEL) == want.get(POD_SPEC_HASH_LABEL)
    )


def pod_actions(wanted: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]]) -> PodActions:
    """What to do so exactly one current registry pod runs (`pods`: those labelled as the
    CatalogSource's). None wanted: delete them all."""
    if wanted is None:
        return PodActions(delete=sorted(body.name(p) for p in pods))
    keep = sorted((p for p in pods if _current(p, wanted)), key=body.name)[:1]
    kept = {body.name(p) for p in keep}
    stale = sorted(
        body.name(p)
        for p in pods
        if body.name(p) not in kept and not body.meta(p).get("deletionTimestamp")
    )
    return PodActions(create=None if keep else dict(wanted), delete=stale)
