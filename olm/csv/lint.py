"""Input OLM v0 ignores silently in a CSV, which olm-py reports once, as Warning events.

Invariants: pure; a finding never changes what is installed, only what the user is told;
each finding is (Event reason, a sentence naming the field and the fix).
"""

from __future__ import annotations

from typing import Any

# Top-level CSV spec fields OLM v0 knows; anything else is kept but reported.
KNOWN_SPEC_FIELDS = frozenset(
    [
        "displayName",
        "description",
        "version",
        "release",
        "replaces",
        "skips",
        "minKubeVersion",
        "maturity",
        "keywords",
        "labels",
        "annotations",
        "provider",
        "maintainers",
        "links",
        "icon",
        "selector",
        "relatedImages",
        "installModes",
        "install",
        "customresourcedefinitions",
        "apiservicedefinitions",
        "webhookdefinitions",
        "nativeAPIs",
        "cleanup",
    ]
)


def lint(csv: dict[str, Any]) -> list[tuple[str, str]]:
    """Input OLM ignores silently; olm-py says so once, as Warning events."""
    spec = csv.get("spec") or {}
    warnings = []
    if spec.get("replaces") and spec["replaces"] == csv["metadata"]["name"]:
        warnings.append(
            (
                "InvalidReplaces",
                f"spec.replaces names this CSV itself ({spec['replaces']}) and is ignored: set it to the "
                "name of the CSV this one upgrades, or remove it",
            )
        )
    for key in sorted(set(spec) - KNOWN_SPEC_FIELDS):
        hint = (
            " (a skipRange belongs in the metadata annotation olm.skipRange)"
            if key == "skipRange"
            else ""
        )
        warnings.append(
            (
                "UnknownField",
                f"spec.{key} is not a ClusterServiceVersion field and is ignored{hint}",
            )
        )
    return warnings
