"""The CRDs in manifests/crds agree with OLM v0's table (olm.api.kinds), field by field."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from olm.api.kinds import CATEGORY, GROUP, KINDS, Kind, KindInfo, header_for
from tests.support.paths import REPO

CRD_DIR = REPO / "manifests" / "crds"


def load_crds() -> dict[str, dict[str, Any]]:
    crds = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        crds[document["spec"]["names"]["kind"]] = document
    return crds


CRDS = load_crds()


def test_every_kind_has_exactly_one_crd_file() -> None:
    assert set(CRDS) == {kind.value for kind in Kind}


@pytest.mark.parametrize("info", KINDS.values(), ids=lambda info: info.kind.value)
def test_crd_matches_olm(info: KindInfo) -> None:
    crd = CRDS[info.kind.value]
    spec = crd["spec"]
    assert crd["metadata"]["name"] == info.crd_name
    assert spec["group"] == GROUP
    assert spec["scope"] == ("Namespaced" if info.namespaced else "Cluster")
    assert spec["names"]["plural"] == info.plural
    assert spec["names"]["singular"] == info.kind.value.lower()
    assert spec["names"]["listKind"] == info.kind.value + "List"
    assert tuple(spec["names"].get("shortNames", ())) == info.short_names
    assert spec["names"]["categories"] == [CATEGORY]
    versions = {version["name"]: version for version in spec["versions"]}
    assert tuple(versions) == info.served_versions
    assert all(version["served"] for version in versions.values())
    assert [name for name, version in versions.items() if version["storage"]] == [
        info.storage_version
    ]
    for version in versions.values():
        assert version["subresources"] == {"status": {}}
        assert version["schema"]["openAPIV3Schema"]["type"] == "object"
    columns = [
        (column["name"], column["jsonPath"], column["type"])
        for column in versions[info.storage_version].get("additionalPrinterColumns", [])
    ]
    assert columns == [(c.name, c.json_path, c.type) for c in info.columns]


def test_column_headers_are_olms() -> None:
    assert header_for(KINDS[Kind.CLUSTER_SERVICE_VERSION]) == [
        "NAME",
        "DISPLAY",
        "VERSION",
        "RELEASE",
        "REPLACES",
        "PHASE",
    ]
    assert header_for(KINDS[Kind.SUBSCRIPTION]) == ["NAME", "PACKAGE", "SOURCE", "CHANNEL"]
    assert header_for(KINDS[Kind.INSTALL_PLAN]) == ["NAME", "CSV", "APPROVAL", "APPROVED"]
    assert header_for(KINDS[Kind.CATALOG_SOURCE]) == ["NAME", "DISPLAY", "TYPE", "PUBLISHER", "AGE"]
    assert header_for(KINDS[Kind.OPERATOR_GROUP]) == ["NAME", "AGE"]


def test_manifests_hold_olms_namespaces_and_global_operator_group() -> None:
    root = CRD_DIR.parent
    namespaces = [
        d["metadata"]["name"] for d in yaml.safe_load_all((root / "namespaces.yaml").read_text())
    ]
    assert namespaces == ["olm", "operators"]
    group = yaml.safe_load((root / "global-operatorgroup.yaml").read_text())
    assert (group["kind"], group["metadata"]["namespace"]) == ("OperatorGroup", "operators")
    assert "spec" not in group or not group["spec"].get("targetNamespaces")


def test_csv_schema_defaults_what_olms_does_for_real_csvs() -> None:
    """OLM's CSV CRD defaults a container port's protocol and a webhook definition's
    containerPort, so the API server writes them into the stored CSV; olm-py's does too."""
    spec = CRDS["ClusterServiceVersion"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = spec["properties"]["spec"]["properties"]
    deployment = spec["install"]["properties"]["spec"]["properties"]["deployments"]["items"]
    pod = deployment["properties"]["spec"]["properties"]["template"]["properties"]["spec"]
    for containers in ("containers", "initContainers", "ephemeralContainers"):
        port = pod["properties"][containers]["items"]["properties"]["ports"]["items"]
        assert port["properties"]["protocol"]["default"] == "TCP"
    webhook = spec["webhookdefinitions"]["items"]["properties"]
    assert webhook["containerPort"]["default"] == 443
    # Untyped on the way there: a malformed pod spec or port still applies, and olm-py says
    # on status what is wrong with it (the bad-input suite), instead of kubectl's refusal.
    untyped = [
        deployment["properties"]["spec"]["properties"]["template"],
        pod,
        pod["properties"]["containers"],
        pod["properties"]["containers"]["items"],
        pod["properties"]["containers"]["items"]["properties"]["ports"],
        port,
        webhook["containerPort"],
    ]
    assert all("type" not in node for node in untyped)
