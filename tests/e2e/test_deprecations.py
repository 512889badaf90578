"""A catalog author deprecates things, and the Subscription says so: a file-based catalog whose
`olm.deprecations` names the package, the alpha channel and the 0.0.2 bundle; a Subscription
applied with kubectl reports each with OLM v0.38's conditions (PackageDeprecated,
ChannelDeprecated, BundleDeprecated and the Deprecated roll-up, True, OLM's messages); when
the catalog lifts the bundle's deprecation, BundleDeprecated goes and the roll-up follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm.catalog.render import to_yaml
from olm.catalog.samples import build
from tests.support.catalog_server import V2, Server, catalog_source
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group
from tests.support.subscriptions import subscribe, subscription

PACKAGE = "memcached-operator"
PACKAGE_SAYS = f"olm.package/{PACKAGE}: memcached-operator is end of life"
CHANNEL_SAYS = "olm.channel/alpha: alpha gets no more updates, use beta"
BUNDLE_SAYS = f"olm.bundle/{V2}: {V2} loses data on restart"
FAMILY = ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated")


def write_deprecated_catalog(directory: Path, bundle_deprecated: bool) -> None:
    """The samples, with the package and its alpha channel deprecated (and 0.0.2, if asked)."""
    catalog = build()
    entries: list[dict[str, Any]] = [
        {"reference": {"schema": "olm.package"}, "message": "memcached-operator is end of life"},
        {
            "reference": {"schema": "olm.channel", "name": "alpha"},
            "message": "alpha gets no more updates, use beta",
        },
    ]
    if bundle_deprecated:
        entries.append(
            {
                "reference": {"schema": "olm.bundle", "name": V2},
                "message": f"{V2} loses data on restart",
            }
        )
    catalog.packages[PACKAGE].deprecations = {
        "schema": "olm.deprecations",
        "package": PACKAGE,
        "entries": entries,
    }
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


def deprecation_conditions(plane: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    """The Subscription's deprecation conditions as `kubectl get sub -o json` shows them."""
    status = subscription(plane, namespace).get("status") or {}
    return {c["type"]: c for c in status.get("conditions") or [] if c["type"] in FAMILY}


def test_deprecated_package_channel_and_bundle_show_on_the_subscription(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, served: Server
) -> None:
    write_deprecated_catalog(served.directory, bundle_deprecated=True)
    served.start()
    catalog_source(control_plane, namespace, served.port)
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", source="updating", sourceNamespace=namespace)

    conditions = wait_for(
        lambda: (
            (found := deprecation_conditions(control_plane, namespace)).keys() == set(FAMILY)
            and found
        ),
        timeout=STEP_TIMEOUT,
        what="the four deprecation conditions",
    )
    assert subscription(control_plane, namespace)["status"]["installedCSV"] == V2, (
        "a deprecated bundle still installs: OLM v0 only reports it"
    )
    assert {
        kind: (c["status"], c.get("reason"), c["message"]) for kind, c in conditions.items()
    } == {
        "PackageDeprecated": ("True", None, PACKAGE_SAYS),
        "ChannelDeprecated": ("True", None, CHANNEL_SAYS),
        "BundleDeprecated": ("True", None, BUNDLE_SAYS),
        "Deprecated": ("True", None, f"{PACKAGE_SAYS}; {CHANNEL_SAYS}; {BUNDLE_SAYS}"),
    }

    # The author lifts 0.0.2's deprecation; the catalog is polled every 2s.
    served.stop()
    write_deprecated_catalog(served.directory, bundle_deprecated=False)
    served.start()
    after = wait_for(
        lambda: (
            "BundleDeprecated" not in (found := deprecation_conditions(control_plane, namespace))
            and found
        ),
        timeout=STEP_TIMEOUT,
        what="BundleDeprecated removed",
    )
    assert {kind: c["message"] for kind, c in after.items()} == {
        "PackageDeprecated": PACKAGE_SAYS,
        "ChannelDeprecated": CHANNEL_SAYS,
        "Deprecated": f"{PACKAGE_SAYS}; {CHANNEL_SAYS}",
    }
