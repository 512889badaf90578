"""Parity scenarios on catalog metadata (catalogs.py, served by opm): deprecations, generic
constraints, and a dependency that upgrades along its own channel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.parity.catalogs import Bundle, Package, write_catalog
from tests.parity.harness import Scope, Side, settled, wait
from tests.parity.steps import (
    TIMEOUT,
    Snapshots,
    condition,
    gone,
    namespace,
    operator_group,
    subscribe,
    subscription_status,
    wait_csv,
)
from tests.support.stories import minimal_csv

DEPRECATED = "tiny-deprecated.v1.0.0"
DEPRECATION_FAMILY = ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated")


def deprecations(side: Side) -> Snapshots:
    """A package whose package, alpha channel and only bundle are deprecated in the catalog's
    `olm.deprecations`: it still installs, and the Subscription carries the four conditions."""
    ns, source = "parity-deprecations", "parity-deprecations"
    directory = side.log_dir / source
    if not directory.exists():
        package = Package(
            "tiny-deprecated",
            "alpha",
            [Bundle([minimal_csv(DEPRECATED)])],
            deprecations=[
                {"reference": {"schema": "olm.package"}, "message": "tiny is end of life"},
                {
                    "reference": {"schema": "olm.channel", "name": "alpha"},
                    "message": "alpha gets no more updates",
                },
                {
                    "reference": {"schema": "olm.bundle", "name": DEPRECATED},
                    "message": f"{DEPRECATED} loses data on restart",
                },
            ],
        )
        write_catalog(directory, [package])
    side.catalog(source, directory)
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Automatic", sub="tiny", **{"name": "tiny-deprecated", "source": source})
    wait_csv(side, ns, DEPRECATED)
    sub = "subscriptions.operators.coreos.com"
    wait(
        lambda: (
            subscription_status(side, ns, "tiny").get("state") == "AtLatestKnown"
            and all(
                condition(side, ns, sub, "tiny", t).get("status") == "True"
                for t in DEPRECATION_FAMILY
            )
        ),
        TIMEOUT,
        "Subscription AtLatestKnown with the four deprecation conditions",
    )
    return {"installed": settled(side, Scope([ns], catalogs=[source]))}


def needs(package: str, failure_message: str = "") -> dict[str, Any]:
    """An `olm.constraint` property whose CEL rule asks for a bundle of PACKAGE."""
    value: dict[str, Any] = {
        "cel": {
            "rule": f"properties.exists(p, p.type == 'olm.package' && "
            f"p.value.packageName == '{package}')"
        }
    }
    if failure_message:
        value["failureMessage"] = failure_message
    return {"type": "olm.constraint", "value": value}


def generic_constraint(side: Side) -> Snapshots:
    """Two packages whose bundles carry an `olm.constraint` CEL rule: one satisfied by another
    package of the catalog (it is installed as a dependency), one asking for a package no
    catalog has (with a failureMessage: the Subscription says ResolutionFailed)."""
    ok, failing, source = "parity-constraint-ok", "parity-constraint-fail", "parity-constraints"
    directory = side.log_dir / source
    if not directory.exists():
        packages = [
            Package("provider", "alpha", [Bundle([minimal_csv("provider.v1.0.0")])]),
            Package(
                "needy",
                "alpha",
                [Bundle([minimal_csv("needy.v1.0.0")], properties=[needs("provider")])],
            ),
            Package(
                "lonely",
                "alpha",
                [
                    Bundle(
                        [minimal_csv("lonely.v1.0.0")],
                        properties=[needs("absent", "lonely needs the absent operator")],
                    )
                ],
            ),
        ]
        write_catalog(directory, packages)
    side.catalog(source, directory)
    for ns, package in ((ok, "needy"), (failing, "lonely")):
        namespace(side, ns)
        operator_group(side, ns, [ns])
        subscribe(side, ns, "Automatic", sub=package, **{"name": package, "source": source})
    wait_csv(side, ok, "needy.v1.0.0")
    wait_csv(side, ok, "provider.v1.0.0")
    wait(
        lambda: subscription_status(side, ok, "needy").get("state") == "AtLatestKnown",
        TIMEOUT,
        "needy AtLatestKnown",
    )
    sub = "subscriptions.operators.coreos.com"
    wait(
        lambda: condition(side, failing, sub, "lonely", "ResolutionFailed").get("status") == "True",
        TIMEOUT,
        "lonely ResolutionFailed",
    )
    return {"resolved": settled(side, Scope([ok, failing], catalogs=[source]))}


BASE, TOP = "base-operator", "top-operator"
BASE_SUB = f"{BASE}-alpha-parity-deps-olm"  # the Subscription OLM makes for a dependency


def _dependency_catalog(directory: Path, upgraded: bool) -> Path:
    """top-operator 1.0.0 requires package base-operator >=1.0.0; base-operator's alpha channel
    holds 1.0.0, and with `upgraded` also 1.1.0 replacing it."""
    base = [Bundle([minimal_csv(f"{BASE}.v1.0.0")])]
    if upgraded:
        newer = minimal_csv(f"{BASE}.v1.1.0", version="1.1.0", replaces=f"{BASE}.v1.0.0")
        base.append(Bundle([newer], replaces=f"{BASE}.v1.0.0"))
    requires = {
        "type": "olm.package.required",
        "value": {"packageName": BASE, "versionRange": ">=1.0.0"},
    }
    top = Bundle([minimal_csv(f"{TOP}.v1.0.0")], properties=[requires])
    if not directory.exists():
        write_catalog(directory, [Package(BASE, "alpha", base), Package(TOP, "alpha", [top])])
    return directory


def dependency_upgrade(side: Side) -> Snapshots:
    """A package requiring another is installed (the dependency with a Subscription of its
    own, as OLM makes it); then the dependency's channel gains a new head in the catalog, and
    that Subscription upgrades it."""
    ns, source = "parity-dep-upgrade", "parity-deps"
    scope = Scope([ns], catalogs=[source])
    side.catalog(source, _dependency_catalog(side.log_dir / f"{source}-v1", upgraded=False))
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Automatic", sub="top", **{"name": TOP, "source": source})
    wait_csv(side, ns, f"{TOP}.v1.0.0")
    wait_csv(side, ns, f"{BASE}.v1.0.0")
    wait(
        lambda: (
            subscription_status(side, ns, BASE_SUB).get("state") == "AtLatestKnown"
            and subscription_status(side, ns, "top").get("state") == "AtLatestKnown"
        ),
        TIMEOUT,
        "both Subscriptions AtLatestKnown",
    )
    snaps = {"installed": settled(side, scope)}

    side.reserve(source, _dependency_catalog(side.log_dir / f"{source}-v2", upgraded=True))
    wait_csv(side, ns, f"{BASE}.v1.1.0")
    wait(
        lambda: (
            gone(side, ns, f"{BASE}.v1.0.0")
            and subscription_status(side, ns, BASE_SUB).get("installedCSV") == f"{BASE}.v1.1.0"
            and subscription_status(side, ns, BASE_SUB).get("state") == "AtLatestKnown"
        ),
        TIMEOUT,
        f"{BASE}.v1.1.0 installed by {BASE_SUB}, 1.0.0 gone",
    )
    snaps["dependency-upgraded"] = settled(side, scope)
    return snaps
