"""What an InstallPlan may install: OLM's installable kinds, and the cluster admin's additions.

OLM v0.38 writes a bundle object only when its kind is one ExecutePlan knows
(`pkg/controller/operators/catalog/operator.go`, the explicit cases, and the list in
`supportedresources.go`); any other kind marks its step `UnsupportedResource` and fails the
plan ("the InstallPlan contains invalid data"). olm-py keeps the same list by default, so a
bundle cannot bring an admission policy, a webhook configuration of its own, a Namespace or a
PersistentVolume into the cluster. An admin who wants more names the kinds explicitly
(`olm run --allow-bundle-kind KIND`, the chart's `extraBundleKinds`).

Where olm-py differs from OLM (docs/differences.md): the whole plan is checked before its
first step is written, so nothing of a refused bundle is applied (OLM writes the steps before
the unsupported one and then retries for a minute before failing).

Invariants: pure; kinds are matched by `kind` alone, as OLM matches them (a bundle object's
group does not widen or narrow the list).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api.installplan import DONE_STEP_STATUSES, StepStatus

# The kinds ExecutePlan writes from an InstallPlan step in OLM v0.38: its explicit cases ...
OLM_STEP_KINDS = frozenset(
    {
        "CustomResourceDefinition",
        "ClusterServiceVersion",
        "Subscription",
        "BundleSecret",
        "Secret",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ServiceAccount",
        "Service",
        "ConfigMap",
    }
)
# ... and the optional kinds it lets through to the dynamic client.
OLM_OPTIONAL_KINDS = frozenset(
    {
        "PrometheusRule",
        "ServiceMonitor",
        "PodDisruptionBudget",
        "PriorityClass",
        "VerticalPodAutoscaler",
        "ConsoleYAMLSample",
        "ConsoleQuickStart",
        "ConsoleCLIDownload",
        "ConsoleLink",
        "ConsolePlugin",
        "NetworkPolicy",
    }
)
OLM_INSTALLABLE_KINDS = OLM_STEP_KINDS | OLM_OPTIONAL_KINDS
# The installable kinds that are cluster-scoped: their step manifests name no namespace and
# they are read and written without one (OLM sets a namespace only on namespaced kinds).
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "PriorityClass",
        "ConsoleYAMLSample",
        "ConsoleQuickStart",
        "ConsoleCLIDownload",
        "ConsoleLink",
        "ConsolePlugin",
    }
)

ALLOW_KIND_FLAG = "--allow-bundle-kind"
ALLOW_KIND_CHART_VALUE = "extraBundleKinds"


@dataclass(frozen=True)
class InstallPolicy:
    """What `olm run` was told about installs. The default is OLM's behaviour exactly."""

    # Kinds beyond OLM's list that bundles may install (`--allow-bundle-kind`).
    extra_kinds: frozenset[str] = frozenset()
    # Namespaces whose plans may ask any RBAC (`--admin-namespaces`); none: the tenancy check
    # (olm.installplan.tenancy) is off, as OLM has none.
    admin_namespaces: frozenset[str] = frozenset()

    def installable(self, kind: str) -> bool:
        return kind in OLM_INSTALLABLE_KINDS or kind in self.extra_kinds


DEFAULT_POLICY = InstallPolicy()


def parse_kinds(values: Iterable[str]) -> frozenset[str]:
    """`--allow-bundle-kind` values: repeated and/or comma-separated kind names.

    Raises ValueError naming a value that is not a Kubernetes kind name."""
    kinds: set[str] = set()
    for value in values:
        for kind in (part.strip() for part in value.split(",")):
            if not kind:
                continue
            if not (kind[0].isalpha() and kind[0].isupper() and kind.isalnum()):
                raise ValueError(
                    f"{ALLOW_KIND_FLAG} {kind!r}: not a kind name; give the kind as it appears "
                    "in a manifest's `kind:` field, e.g. ValidatingAdmissionPolicy"
                )
            kinds.add(kind)
    return frozenset(kinds)


def unsupported_steps(manifests: Sequence[Mapping[str, Any]], policy: InstallPolicy) -> list[int]:
    """Indexes of the steps whose kind the policy does not let a bundle install."""
    return [i for i, m in enumerate(manifests) if not policy.installable(str(m.get("kind", "")))]


def unsupported_message(
    refused: Sequence[tuple[int, Mapping[str, Any], str]], anything_applied: bool
) -> str:
    """Why the plan failed: (step index, manifest, resolving CSV) of every refused step."""
    described = "; ".join(
        f"status.plan[{index}] {manifest.get('kind', '')} "
        f"{(manifest.get('metadata') or {}).get('name', '')}"
        + (f" of bundle {resolving}" if resolving else "")
        for index, manifest, resolving in refused
    )
    kinds = ",".join(sorted({str(m.get("kind", "")) for _, m, _ in refused}))
    applied = (
        "steps written before this check keep their status"
        if anything_applied
        else "nothing of this plan was applied"
    )
    return (
        f"the InstallPlan contains invalid data: {described}: not a kind OLM installs from a "
        f"bundle ({applied}). Installing it is the cluster admin's choice: run olm with "
        f"{ALLOW_KIND_FLAG} {kinds} (chart value {ALLOW_KIND_CHART_VALUE}), then delete this "
        "InstallPlan so that the Subscription makes a new one"
    )


def refusal(
    entries: Sequence[Mapping[str, Any]],
    manifests: Sequence[Mapping[str, Any]],
    policy: InstallPolicy,
) -> tuple[list[dict[str, Any]], str] | None:
    """The plan's steps with every refused one marked `UnsupportedResource`, and the message
    the plan fails with; None when every step's kind may be installed."""
    refused = unsupported_steps(manifests, policy)
    if not refused:
        return None
    applied = any(
        isinstance(e.get("status"), str) and e["status"] in DONE_STEP_STATUSES for e in entries
    )
    marked = [dict(e) for e in entries]
    described = []
    for index in refused:
        marked[index]["status"] = StepStatus.UNSUPPORTED_RESOURCE.value
        resolving = entries[index].get("resolving")
        described.append((index, manifests[index], resolving if isinstance(resolving, str) else ""))
    return marked, unsupported_message(described, applied)
