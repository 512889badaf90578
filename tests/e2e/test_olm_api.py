"""An admin's first look: OLM's API is served with OLM's columns, and real CSVs apply."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from olm.api.kinds import KINDS, Kind, header_for
from tests.support.cluster import ControlPlane
from tests.support.paths import SHARED

CORPUS = SHARED / "corpus" / "community-operators"
CSV_API_VERSION = KINDS[Kind.CLUSTER_SERVICE_VERSION].api_version

SAMPLES = {
    Kind.CLUSTER_SERVICE_VERSION: {
        "spec": {
            "displayName": "Example",
            "version": "0.0.1",
            "replaces": "example.v0.0.0",
            "install": {"strategy": "deployment", "spec": {"deployments": []}},
        }
    },
    Kind.SUBSCRIPTION: {
        "spec": {
            "name": "example",
            "source": "samples",
            "sourceNamespace": "olm",
            "channel": "alpha",
        }
    },
    Kind.INSTALL_PLAN: {
        "spec": {
            "clusterServiceVersionNames": ["example.v0.0.1"],
            "approval": "Manual",
            "approved": False,
        }
    },
    Kind.CATALOG_SOURCE: {
        "spec": {
            "sourceType": "grpc",
            "address": "127.0.0.1:50051",
            "displayName": "Samples",
            "publisher": "olm-py",
        }
    },
    Kind.OPERATOR_GROUP: {"spec": {}},
}


def manifest(kind: Kind, name: str) -> dict[str, Any]:
    return {
        "apiVersion": KINDS[kind].api_version,
        "kind": kind.value,
        "metadata": {"name": name},
        **SAMPLES[kind],
    }


def test_kubectl_get_all_olm_kinds_shows_olms_columns(
    control_plane: ControlPlane, namespace: str
) -> None:
    items = [manifest(kind, "example") for kind in SAMPLES]
    control_plane.kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
    )
    everything = control_plane.kubectl("get", "csv,sub,ip,og,catsrc", "-A")
    assert "example" in everything.stdout
    for kind, resource in [
        (Kind.CLUSTER_SERVICE_VERSION, "csv"),
        (Kind.SUBSCRIPTION, "sub"),
        # Kubernetes >= 1.33 serves IPAddress with the same short name `ip` and kubectl prefers
        # it (docs/differences.md); the group-qualified short name and the full name work.
        (Kind.INSTALL_PLAN, "ip.operators.coreos.com"),
        (Kind.INSTALL_PLAN, "installplan"),
        (Kind.OPERATOR_GROUP, "og"),
        (Kind.CATALOG_SOURCE, "catsrc"),
    ]:
        output = control_plane.kubectl("get", resource, "-n", namespace).stdout.splitlines()
        assert output[0].split() == header_for(KINDS[kind]), resource
        assert output[1].split()[0] == "example"
    csv_row = control_plane.kubectl(
        "get", "csv", "example", "-n", namespace, "--no-headers"
    ).stdout.split()
    # The PHASE column fills in once olm-py has looked at the CSV; the rest is the spec.
    assert csv_row[:4] == ["example", "Example", "0.0.1", "example.v0.0.0"]
    ip_row = control_plane.kubectl(
        "get", "installplan", "example", "-n", namespace, "--no-headers"
    ).stdout.split()
    assert ip_row == ["example", "example.v0.0.1", "Manual", "false"]
    all_namespaces = control_plane.kubectl("get", "csv", "-A").stdout.splitlines()[0].split()
    assert all_namespaces == ["NAMESPACE", *header_for(KINDS[Kind.CLUSTER_SERVICE_VERSION])]


def test_the_ip_short_name_clash_is_named_by_kubectl(
    control_plane: ControlPlane, namespace: str
) -> None:
    """Pinned so we notice when Kubernetes or kubectl change how `ip` resolves."""
    result = control_plane.kubectl("get", "ip", "-n", namespace)
    assert (
        "could also match lower priority resource installplans.operators.coreos.com"
        in result.stderr
    )


def test_olm_category_and_global_operator_group(control_plane: ControlPlane) -> None:
    resources = control_plane.kubectl(
        "api-resources", "--categories=olm", "-o", "name"
    ).stdout.split()
    assert sorted(resources) == sorted(info.crd_name for info in KINDS.values())
    group = control_plane.get_json("operatorgroup", "global-operators", "-n", "operators")
    assert group["spec"]["upgradeStrategy"] == "Default", "the CRD defaults the upgrade strategy"
    assert control_plane.get_json("namespace", "olm")["metadata"]["name"] == "olm"


class _KubectlLikeLoader(yaml.SafeLoader):
    """Like kubectl's YAML reading: timestamps stay strings instead of becoming datetimes."""


_KubectlLikeLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _documents(path: Path) -> Iterator[Any]:
    try:
        yield from yaml.load_all(path.read_text(), Loader=_KubectlLikeLoader)
    except yaml.YAMLError:
        assert "kind: ClusterServiceVersion" not in path.read_text(), (
            f"{path} holds a CSV we could not parse"
        )


def corpus_csvs() -> list[tuple[str, dict[str, Any]]]:
    """Every CSV in the corpus: bundle and package-manifest files, and CSVs inline in FBCs."""
    found = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        for document in _documents(path):
            if not isinstance(document, dict):
                continue
            if document.get("kind") == "ClusterServiceVersion":
                found.append((str(path.relative_to(CORPUS)), document))
            for prop in (
                document.get("properties", []) if document.get("schema") == "olm.bundle" else []
            ):
                if prop.get("type") == "olm.bundle.object":
                    inline = json.loads(base64.b64decode(prop["value"]["data"]))
                    if inline.get("kind") == "ClusterServiceVersion":
                        found.append((f"{path.relative_to(CORPUS)}#{document['name']}", inline))
    return found


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus beside the repo")
def test_every_corpus_csv_is_accepted_by_the_api_server(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    csvs = corpus_csvs()
    assert len(csvs) >= 349, f"expected every bundle's CSV, found {len(csvs)}"
    # One upstream CSV declares a group-less apiVersion that no API server can route (OLM's
    # neither); its content is still checked, under the right apiVersion.
    misrouted = sorted(source for source, csv in csvs if csv["apiVersion"] != CSV_API_VERSION)
    assert misrouted == ["operators/k8gb/0.11.4/manifests/k8gb.v0.11.4.clusterserviceversion.yaml"]
    items = []
    origin = {}
    for index, (source, csv) in enumerate(csvs):
        csv = {**csv, "apiVersion": CSV_API_VERSION}
        # Names repeat across packages and formats; a unique prefix keeps every CSV distinct.
        name = f"c{index:03d}-{csv['metadata']['name']}"[:253]
        metadata = {
            k: v for k, v in csv["metadata"].items() if k not in ("namespace", "creationTimestamp")
        }
        items.append({**csv, "metadata": {**metadata, "name": name}})
        origin[name] = source
    batch = tmp_path / "csvs.json"
    batch.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    # `kubectl create` (not client-side apply) so large CSVs are not limited by kubectl's
    # last-applied annotation; validation is kubectl's default (strict).
    result = control_plane.kubectl(
        "create", "-n", namespace, "-f", str(batch), check=False, timeout=600
    )
    rejected = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 0 and not rejected, "rejected:\n" + "\n".join(rejected[:20])
    stored = control_plane.kubectl("get", "csv", "-n", namespace, "-o", "name").stdout.split()
    assert len(stored) == len(items)
