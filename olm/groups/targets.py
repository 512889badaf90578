"""OperatorGroup target namespaces and what they mean for the CSVs in the group.

Invariants (OLM v0 §4.1-4.2): spec.targetNamespaces wins; else an empty selector means all
namespaces, written as [""]; `olm.targetNamespaces` is the sorted targets joined by ",".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api.csv import CsvReason
from olm.api.labels import Annotation

ALL_NAMESPACES = ""


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = (
            expression.get("key"),
            expression.get("operator"),
            expression.get("values") or [],
        )
        present = key in labels
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def target_namespaces(
    group: Mapping[str, Any], namespaces: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """The group's targets; `namespaces` maps every namespace name to its labels.

    spec.targetNamespaces is taken as written, existing or not (as OLM); its "" entries, which
    OLM refuses, are dropped here and reported by the group's decision.
    """
    spec = group.get("spec") or {}
    explicit = [t for t in spec.get("targetNamespaces") or [] if isinstance(t, str)]
    if explicit:
        return sorted({t for t in explicit if t})
    selector = spec.get("selector")
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return [ALL_NAMESPACES]
    return sorted(
        name for name, labels in namespaces.items() if _selector_matches(selector, labels)
    )


def csv_annotations(group: Mapping[str, Any], targets: list[str]) -> dict[str, str]:
    return {
        Annotation.OPERATOR_GROUP: group["metadata"]["name"],
        Annotation.OPERATOR_NAMESPACE: group["metadata"]["namespace"],
        Annotation.TARGET_NAMESPACES: ",".join(sorted(targets)),
    }


def install_mode_problem(csv: dict[str, Any], targets: list[str]) -> tuple[CsvReason, str] | None:
    """Why the CSV cannot serve these targets, or None when its installModes allow it."""
    namespace = csv["metadata"]["namespace"]
    modes: dict[str, bool] = {}
    for mode in (csv.get("spec") or {}).get("installModes") or []:
        kind = mode.get("type")
        if kind in modes:
            return (
                CsvReason.INVALID_INSTALL_MODES,
                f"spec.installModes lists {kind} twice: keep one entry per type",
            )
        modes[kind] = bool(mode.get("supported"))
    if not targets:
        return (
            CsvReason.NO_TARGET_NAMESPACES,
            "no targetNamespaces are matched operatorgroups namespace selection",
        )
    if ALL_NAMESPACES in targets:
        if len(targets) > 1:
            return (
                CsvReason.UNSUPPORTED_OPERATOR_GROUP,
                'the OperatorGroup mixes all namespaces ("") with named namespaces',
            )
        if not modes.get("AllNamespaces"):
            return (
                CsvReason.UNSUPPORTED_OPERATOR_GROUP,
                "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces",
            )
        return None
    if len(targets) == 1 and targets[0] == namespace:
        if not modes.get("OwnNamespace"):
            return (
                CsvReason.UNSUPPORTED_OPERATOR_GROUP,
                "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace",
            )
        return None
    if len(targets) == 1:
        if not modes.get("SingleNamespace"):
            return (
                CsvReason.UNSUPPORTED_OPERATOR_GROUP,
                "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace",
            )
        return None
    if not modes.get("MultiNamespace"):
        return (
            CsvReason.UNSUPPORTED_OPERATOR_GROUP,
            f"MultiNamespace InstallModeType not supported, cannot configure to watch {len(targets)} namespaces",
        )
    if namespace in targets and not modes.get("OwnNamespace"):
        return (
            CsvReason.UNSUPPORTED_OPERATOR_GROUP,
            "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace",
        )
    return None


def provided_apis(csvs: list[dict[str, Any]]) -> str:
    """`olm.providedAPIs`: sorted Kind.version.group of every owned CRD, comma-joined."""
    apis = set()
    for csv in csvs:
        for owned in ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get(
            "owned"
        ) or []:
            name, kind, version = (
                owned.get("name", ""),
                owned.get("kind", ""),
                owned.get("version", ""),
            )
            group = name.split(".", 1)[1] if "." in name else ""
            if kind and version and group:
                apis.add(f"{kind}.{version}.{group}")
    return ",".join(sorted(apis))
