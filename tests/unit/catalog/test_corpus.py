"""Every package of the community corpus is read, validated, inspected and rendered without a
crash; heads and channel entries of a hand-checked sample are pinned; the invalid packages are
exactly the ones we know about, for the reasons we know."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from olm.catalog.formats import load
from olm.catalog.inspect import inspect
from olm.catalog.render import to_yaml
from olm.catalog.validate import validate
from tests.support.paths import SHARED

CORPUS = SHARED / "corpus" / "community-operators"
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason="needs ../shared/corpus beside the repo"
)

# Why each invalid package is invalid (docs/catalogs.md tells the story).
KNOWN_INVALID = {
    "operators/community-windows-machine-config-operator": {
        "channel-head",
        "bundle-service-account",
    },  # preview: 3 replaces chains
    "operators/ecr-secret-operator": {
        "channel-head"
    },  # FBC package: bundle annotations carry no replaces
    "operators/eventing-kogito": {"dependencies-parse"},  # metadata/dependencies.yaml is not YAML
    "operators/gitlab-runner-operator": {"channel-stranded"},  # semver-mode package
    "operators/l5-operator": {"channel-head"},  # semver-mode package
    "operators/ncn-operator": {"channel-stranded"},  # semver-mode package
    "operators/node-healthcheck-operator": {"channel-head", "bundle-service-account"},
    "operators/observability-operator": {"channel-head"},
    "operators/odf-node-recovery-operator": {"channel-head"},  # FBC package
    "operators/prometheus-exporter-operator": {"channel-head", "bundle-service-account"},
    "operators/self-node-remediation": {"channel-head"},
    "operators/slurm-operator": {"bundle-duplicate", "channel-head"},  # two dirs hold v0.4.0
    # operator-framework/api's checks: an alm-examples entry for an API the CSV does not own
    "upstream-community-operators/kubeturbo": {"csv-examples"},
}


def packages() -> list[Path]:
    return sorted(
        p
        for sub in ("operators", "upstream-community-operators")
        for p in (CORPUS / sub).iterdir()
        if p.is_dir()
    ) + sorted(c for c in (CORPUS / "catalogs").glob("*/*") if c.is_dir())


@pytest.mark.parametrize("path", packages(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_package_reads_validates_inspects_and_renders(path: Path) -> None:
    catalog = load(path)
    assert catalog.packages, f"no package read from {path}"
    problems = validate(catalog)
    key = str(path.relative_to(CORPUS))
    assert {p.rule for p in problems} == KNOWN_INVALID.get(key, set()), [
        str(p) for p in problems[:3]
    ]
    facts = inspect(catalog)
    assert to_yaml(catalog).count("schema: olm.bundle") == catalog.bundle_count
    for package in facts.values():
        assert package["defaultChannel"], "every corpus package has a default channel"


@pytest.fixture(scope="module")
def corpus_facts() -> dict[str, object]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "olm.cli",
            "catalog",
            "inspect",
            str(CORPUS / "operators"),
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    upstream = inspect(load(CORPUS / "upstream-community-operators"))
    return {**facts, **upstream}


PINNED_HEADS = {
    ("cockroachdb", "stable"): (
        "cockroachdb.v2.1.11",
        ["cockroachdb.v2.1.11", "cockroachdb.v2.1.1", "cockroachdb.v2.0.9"],
    ),
    ("cockroachdb", "stable-3.x"): ("cockroachdb.v3.0.7", ["cockroachdb.v3.0.7"]),
    ("cockroachdb", "stable-5.x"): (
        "cockroachdb.v5.0.4",
        ["cockroachdb.v5.0.4", "cockroachdb.v5.0.3"],
    ),
    ("etcd", "singlenamespace-alpha"): (
        "etcdoperator.v0.9.4",
        ["etcdoperator.v0.9.4", "etcdoperator.v0.9.2", "etcdoperator.v0.9.0"],
    ),
    ("etcd", "clusterwide-alpha"): (
        "etcdoperator.v0.9.4-clusterwide",
        [
            "etcdoperator.v0.9.4-clusterwide",
            "etcdoperator.v0.9.2-clusterwide",
            "etcdoperator.v0.9.0",
        ],
    ),
    ("etcd", "alpha"): ("etcdoperator.v0.6.1", ["etcdoperator.v0.6.1"]),
    ("enmasse", "alpha"): ("enmasse.0.32.2", None),
    ("eunomia", "alpha"): ("eunomia.v0.1.7", None),
    ("community-windows-machine-config-operator", "preview"): (
        None,
        None,
    ),  # three chains: no single head
}
PINNED_DEFAULTS = {
    "cockroachdb": "stable-v6.x",
    "etcd": "singlenamespace-alpha",
    "eunomia": "alpha",
    "apicurito": "latest",
}


@pytest.mark.parametrize(("package", "channel"), sorted(PINNED_HEADS))
def test_pinned_heads_and_entries(
    corpus_facts: dict[str, dict[str, dict[str, dict[str, object]]]], package: str, channel: str
) -> None:
    expected_head, expected_entries = PINNED_HEADS[(package, channel)]
    found = corpus_facts[package]["channels"][channel]
    assert found["head"] == expected_head
    if expected_entries is not None:
        assert found["entries"] == expected_entries


@pytest.mark.parametrize("package", sorted(PINNED_DEFAULTS))
def test_pinned_default_channels(corpus_facts: dict[str, dict[str, object]], package: str) -> None:
    assert corpus_facts[package]["defaultChannel"] == PINNED_DEFAULTS[package]


def test_bundle_facts(corpus_facts: dict[str, dict[str, dict[str, dict[str, object]]]]) -> None:
    bundle = corpus_facts["etcd"]["bundles"]["etcdoperator.v0.9.4"]
    assert bundle["version"] == "0.9.4"
    assert bundle["replaces"] == "etcdoperator.v0.9.2"
    assert bundle["ownedCRDs"] == [
        "etcdbackups.etcd.database.coreos.com",
        "etcdclusters.etcd.database.coreos.com",
        "etcdrestores.etcd.database.coreos.com",
    ]
    assert bundle["installModes"] == {
        "OwnNamespace": True,
        "SingleNamespace": True,
        "MultiNamespace": False,
        "AllNamespaces": False,
    }
    dbaas = corpus_facts["dbaas-operator"]["bundles"]
    [only] = dbaas.values()
    assert only["dependencies"] == [
        {
            "type": "olm.package",
            "value": {"packageName": "ack-rds-controller", "version": ">=0.0.27 <=0.1.3"},
        }
    ]
