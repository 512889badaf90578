"""Parity scenario `packagemanifests`: what `kubectl get packagemanifests` answers on the real
OLM v0.38 (its packageserver, run as its chart runs it) and on olm-py (`olm run`).

Catalogs, the same on both sides: olm/samples (both sides serve it at start), olm/parity (the
suite's parity catalog), olm/parity-pm (the showcase catalog below: an icon, three channels, a
deprecated package, channel and bundle, provider URL, keywords, links, maintainers, owned and
required CRDs, an owned API service, native APIs, related images, arch/os labels, a CSV
without a version; and a package whose bundles have an image, whose CSVs a registry answers
to GetBundle only), and the same showcase catalog again as a namespace's own catalog,
parity-pm/own (with labels of its own, which packageserver copies onto its manifests). There
is no image catalog: the real OLM cannot start a registry pod on kwok (docs/parity.md).

Points (each a snapshot of the suite's usual shape):
- `list-all`: `kubectl get packagemanifests -A -o json`, every item;
- `list-namespace`: `-n parity-pm` (its own catalog, then the global ones, all in its name);
- `list-elsewhere`: `-n default` (the global catalogs only);
- `get`: Gets from parity-pm (its own catalog wins) and from olm, and a Get of a package that
  does not exist (the error kubectl prints);
- `selectors`: label and field selectors (which manifests each one lists, or its error);
- `icon`: the icon subresource of a package with an icon and one without: status,
  Content-Type, ETag and the SHA-256 of the bytes;
- `table`: the columns and rows of `kubectl get packagemanifests` (AGE left out).

A manifest's snapshot name is `<package>@<catalog>`: the same package is listed once per
catalog, and a namespaced list puts every manifest in the namespace asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from olm.kube.client import api_client
from tests.parity.catalogs import Bundle, bundle_properties
from tests.parity.harness import Side, wait
from tests.parity.normalize import normalize

Snapshots = dict[str, list[dict[str, Any]]]

API = "/apis/packages.operators.coreos.com/v1"
NAMESPACE = "parity-pm"
SHOWCASE = "pm-showcase"
PLAIN = "pm-plain"
IMAGED = "pm-imaged"
GLOBAL_CATALOG, OWN_CATALOG = "parity-pm", "own"
PLAIN_PROVIDER = "Plain"
OWN_LABELS = {"team": "parity", "catalog-tier": "own"}
EXPECTED = {  # catalog -> packages it lists (both sides wait for all of them)
    "samples": {"memcached-operator", "memcached-dashboard"},
    "parity": {"widget-operator", "deployment-validation-operator"},
    GLOBAL_CATALOG: {SHOWCASE, PLAIN, IMAGED},
    OWN_CATALOG: {SHOWCASE, PLAIN, IMAGED},
}
TIMEOUT = 180.0
# A 1x1 PNG and a small SVG: the first icon is the one the icon subresource serves.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a3f7b3cc0000000049454e44ae426082"
    )
).decode()
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()


# --- the showcase catalog --------------------------------------------------------------------


def _crd(plural: str, group: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }


def _deployment(name: str, version: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "name": name,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": name,
                    "initContainers": [
                        {"name": "init", "image": f"registry.invalid/init:{version}"}
                    ],
                    "containers": [
                        {"name": "manager", "image": f"registry.invalid/{name}:{version}"},
                        {"name": "proxy", "image": "registry.invalid/proxy:1"},
                    ],
                },
            },
        },
    }


def showcase_csv(version: str, replaces: str = "") -> dict[str, Any]:
    """A CSV with every field a PackageManifest's `currentCSVDesc` carries."""
    name = f"{SHOWCASE}.v{version}"
    spec: dict[str, Any] = {
        "displayName": "PackageManifest showcase",
        "description": f"Everything a PackageManifest shows, version {version}.",
        "version": version,
        "icon": [
            {"base64data": PNG, "mediatype": "image/png"},
            {"base64data": SVG, "mediatype": "image/svg+xml"},
        ],
        "keywords": ["parity", "showcase"],
        "links": [{"name": "Docs", "url": "https://example.invalid/docs"}],
        "maintainers": [{"name": "Parity", "email": "parity@example.invalid"}],
        "maturity": "stable" if version >= "1.0.0" else "alpha",
        "provider": {"name": "Parity Inc", "url": "https://example.invalid"},
        "minKubeVersion": "1.25.0",
        "installModes": [
            {"type": "OwnNamespace", "supported": True},
            {"type": "SingleNamespace", "supported": True},
            {"type": "MultiNamespace", "supported": False},
            {"type": "AllNamespaces", "supported": True},
        ],
        "customresourcedefinitions": {
            "owned": [
                {
                    "name": "showcases.pm.example.com",
                    "version": "v1",
                    "kind": "Showcase",
                    "displayName": "Showcase",
                    "description": "A showcase",
                    "resources": [{"kind": "Deployment", "name": "", "version": "v1"}],
                    "specDescriptors": [{"path": "size", "displayName": "Size"}],
                }
            ],
            "required": [
                {
                    "name": "widgets.parity.example.com",
                    "version": "v1alpha1",
                    "kind": "Widget",
                    "displayName": "Widget",
                }
            ],
        },
        "apiservicedefinitions": {
            "owned": [
                {
                    "group": "metrics.pm.example.com",
                    "version": "v1",
                    "kind": "Sample",
                    "name": "samples",
                    "displayName": "Sample",
                    "description": "Served by the showcase",
                    "deploymentName": "pm-showcase",
                    "containerPort": 5443,
                }
            ]
        },
        "nativeAPIs": [{"group": "", "version": "v1", "kind": "ConfigMap"}],
        "relatedImages": [
            {"name": "manager", "image": f"registry.invalid/pm-showcase:{version}"},
            {"name": "extra", "image": "registry.invalid/extra:3"},
            {"name": "another", "image": "registry.invalid/another:9"},
        ],
        "install": {
            "strategy": "deployment",
            "spec": {"deployments": [_deployment(SHOWCASE, version)]},
        },
    }
    if replaces:
        spec["replaces"] = replaces
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": name,
            "labels": {"operatorframework.io/arch.arm64": "supported", "tier": "showcase"},
            "annotations": {
                "capabilities": "Full Lifecycle",
                "categories": "Developer Tools",
                "containerImage": f"registry.invalid/pm-showcase:{version}",
                "alm-examples": json.dumps([{"kind": "Showcase", "spec": {"size": 1}}]),
            },
        },
        "spec": spec,
    }


def plain_csv() -> dict[str, Any]:
    """A CSV with next to nothing: no version, no icon, a provider without URL, OS labels."""
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": f"{PLAIN}.v0.1.0",
            "labels": {"operatorframework.io/os.linux": "supported"},
        },
        "spec": {
            "displayName": "Plain",
            "provider": {"name": PLAIN_PROVIDER},
            "installModes": [{"type": "AllNamespaces", "supported": True}],
            "install": {
                "strategy": "deployment",
                "spec": {"deployments": [_deployment(PLAIN, "0.1.0")]},
            },
        },
    }


def imaged_csv(version: str) -> dict[str, Any]:
    """A CSV of a bundle that has an image (served by GetBundle only)."""
    csv = plain_csv()
    csv["metadata"] = {"name": f"{IMAGED}.v{version}"}
    csv["spec"] = {**csv["spec"], "displayName": "Imaged", "version": version}
    return csv


def _bundle(
    package: str, csv: dict[str, Any], version: str, *more: dict[str, Any], image: str = ""
) -> dict[str, Any]:
    objects = [csv, *more]
    properties = bundle_properties(package, Bundle(objects))
    properties[0]["value"]["version"] = version  # plain's CSV has none; the bundle has one
    return {
        "schema": "olm.bundle",
        "name": csv["metadata"]["name"],
        "package": package,
        "image": image,
        "properties": properties,
    }


def showcase_documents() -> list[dict[str, Any]]:
    """The FBC documents of the showcase catalog (pm-showcase, pm-plain, pm-imaged)."""
    crd = _crd("showcases", "pm.example.com", "Showcase")
    name = {v: f"{SHOWCASE}.v{v}" for v in ("0.9.0", "1.0.0", "1.1.0", "2.0.0")}
    docs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": SHOWCASE, "defaultChannel": "stable"},
        {
            "schema": "olm.channel",
            "package": SHOWCASE,
            "name": "stable",
            "entries": [
                {"name": name["1.0.0"]},
                {"name": name["1.1.0"], "replaces": name["1.0.0"]},
            ],
        },
        {
            "schema": "olm.channel",
            "package": SHOWCASE,
            "name": "fast",
            "entries": [
                {"name": name["1.1.0"]},
                {"name": name["2.0.0"], "replaces": name["1.1.0"], "skips": [name["1.0.0"]]},
            ],
        },
        {
            "schema": "olm.channel",
            "package": SHOWCASE,
            "name": "legacy",
            "entries": [{"name": name["0.9.0"]}],
        },
        {
            "schema": "olm.deprecations",
            "package": SHOWCASE,
            "entries": [
                {"reference": {"schema": "olm.package"}, "message": "pm-showcase is deprecated."},
                {
                    "reference": {"schema": "olm.channel", "name": "legacy"},
                    "message": "The legacy channel is no longer updated.",
                },
                {
                    "reference": {"schema": "olm.bundle", "name": name["1.0.0"]},
                    "message": "1.0.0 has a known bug; use 1.1.0.",
                },
            ],
        },
        {"schema": "olm.package", "name": PLAIN, "defaultChannel": "alpha"},
        {
            "schema": "olm.channel",
            "package": PLAIN,
            "name": "alpha",
            "entries": [{"name": f"{PLAIN}.v0.1.0"}],
        },
        _bundle(PLAIN, plain_csv(), "0.1.0"),
        # Bundles with an image: a registry leaves their CSV out of ListBundles.
        {"schema": "olm.package", "name": IMAGED, "defaultChannel": "stable"},
        {
            "schema": "olm.channel",
            "package": IMAGED,
            "name": "stable",
            "entries": [
                {"name": f"{IMAGED}.v1.0.0"},
                {"name": f"{IMAGED}.v1.1.0", "replaces": f"{IMAGED}.v1.0.0"},
            ],
        },
        *(
            _bundle(IMAGED, imaged_csv(v), v, image=f"registry.invalid/{IMAGED}-bundle:{v}")
            for v in ("1.0.0", "1.1.0")
        ),
    ]
    replaces = {"1.1.0": name["1.0.0"], "2.0.0": name["1.1.0"]}
    for version in name:
        docs.append(
            _bundle(SHOWCASE, showcase_csv(version, replaces.get(version, "")), version, crd)
        )
    return docs


def write_showcase(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalog.yaml").write_text(
        yaml.safe_dump_all(showcase_documents(), sort_keys=True)
    )
    return directory


# --- what is collected -------------------------------------------------------------------


def keyed(item: dict[str, Any]) -> dict[str, Any]:
    """A manifest renamed `<package>@<catalog>` (its key in a snapshot)."""
    meta = dict(item.get("metadata") or {})
    catalog = (item.get("status") or {}).get("catalogSource", "?")
    meta["name"] = f"{meta.get('name', '?')}@{catalog}"
    return {**item, "kind": "PackageManifest", "metadata": meta}


def _listed(side: Side, *args: str) -> list[dict[str, Any]]:
    result = side.plane.kubectl("get", "packagemanifests", *args, "-o", "json", check=False)
    if result.returncode != 0:
        return []
    items: list[dict[str, Any]] = json.loads(result.stdout).get("items") or []
    return items


def complete(side: Side) -> bool:
    """Every catalog of the scenario lists its packages (the real packageserver reads a catalog
    a little after it is READY)."""
    seen: dict[str, set[str]] = {}
    for item in _listed(side, "-A"):
        seen.setdefault(item["status"]["catalogSource"], set()).add(item["metadata"]["name"])
    return all(seen.get(catalog) == packages for catalog, packages in EXPECTED.items())


def _query(side: Side, name: str, *args: str) -> dict[str, Any]:
    """One selector query: the `<package>@<catalog>` it lists, or kubectl's error."""
    result = side.plane.kubectl("get", "packagemanifests", *args, "-o", "json", check=False)
    out: dict[str, Any] = {"kind": "Query", "metadata": {"name": name}, "args": list(args)}
    if result.returncode != 0:
        out["error"] = result.stderr.strip()
    else:
        items = json.loads(result.stdout).get("items") or []
        out["listed"] = sorted(keyed(i)["metadata"]["name"] for i in items)
    return out


def _get(side: Side, namespace: str, package: str) -> dict[str, Any]:
    args = ["get", "packagemanifest", package, "-n", namespace, "-o", "json"]
    result = side.plane.kubectl(*args, check=False)
    if result.returncode != 0:
        return {
            "kind": "GetError",
            "metadata": {"namespace": namespace, "name": package},
            "error": result.stderr.strip(),
        }
    return keyed(json.loads(result.stdout))


def icon(side: Side, namespace: str, package: str) -> dict[str, Any]:
    api = api_client(side.plane.kubeconfig)
    path = f"{API}/namespaces/{namespace}/packagemanifests/{package}/icon"
    method, url, headers, _, _ = api.param_serialize("GET", path, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers)
    body = response.read()
    return {
        "kind": "Icon",
        "metadata": {"namespace": namespace, "name": package},
        "status": response.status,
        "contentType": response.getheader("Content-Type"),
        "etag": response.getheader("Etag"),
        "sha256": hashlib.sha256(body).hexdigest(),
        "bytes": len(body),
    }


def table(side: Side, name: str, *args: str) -> dict[str, Any]:
    """`kubectl get packagemanifests` as a user reads it: its columns, and its rows without
    the AGE cell (the last one; CATALOG is a display name, which may hold spaces)."""
    header, *rows = side.kubectl("get", "packagemanifests", *args).splitlines()
    columns = header.split()
    if columns[-1:] == ["AGE"]:
        rows = [row.rsplit(None, 1)[0] for row in rows]
    return {
        "kind": "Table",
        "metadata": {"name": name},
        "columns": columns,
        "rows": sorted(" ".join(row.split()) for row in rows),
    }


def collect(side: Side) -> Snapshots:
    others = "default"
    snaps: Snapshots = {
        "list-all": [keyed(i) for i in _listed(side, "-A")],
        "list-namespace": [keyed(i) for i in _listed(side, "-n", NAMESPACE)],
        "list-elsewhere": [keyed(i) for i in _listed(side, "-n", others)],
    }
    gets = [_get(side, NAMESPACE, p) for p in (SHOWCASE, PLAIN, "memcached-operator")]
    gets += [_get(side, "olm", SHOWCASE), _get(side, others, SHOWCASE)]
    gets.append(_get(side, NAMESPACE, "no-such-package"))
    snaps["get"] = gets
    snaps["selectors"] = [
        _query(side, "catalog", "-A", "-l", f"catalog={GLOBAL_CATALOG}"),
        _query(side, "own-labels", "-A", "-l", "team=parity"),
        _query(side, "provider", "-A", "-l", f"provider={PLAIN_PROVIDER}"),
        _query(side, "provider-with-space", "-A", "-l", "provider=Parity Inc"),
        _query(side, "arch", "-A", "-l", "operatorframework.io/arch.arm64=supported"),
        _query(side, "default-arch", "-A", "-l", "operatorframework.io/arch.amd64=supported"),
        _query(side, "set-in", "-A", "-l", "tier in (showcase,other)"),
        _query(side, "set-notin", "-A", "-l", "catalog notin (samples,parity)"),
        _query(side, "not-exists", "-n", NAMESPACE, "-l", "!team"),
        _query(side, "name", "-n", NAMESPACE, "--field-selector", f"metadata.name={SHOWCASE}"),
        _query(side, "name-not", "-A", "--field-selector", f"metadata.name!={SHOWCASE}"),
        _query(side, "namespace-field", "-A", "--field-selector", "metadata.namespace=olm"),
        _query(side, "field-syntax", "-A", "--field-selector", SHOWCASE),
        _query(
            side,
            "catalog-field",
            "-A",
            "--field-selector",
            f"status.catalogSource={GLOBAL_CATALOG}",
        ),
    ]
    snaps["icon"] = [
        icon(side, NAMESPACE, SHOWCASE),
        icon(side, "olm", "memcached-operator"),
        icon(side, NAMESPACE, "no-such-package"),
    ]
    snaps["table"] = [
        table(side, "all", "-A"),
        table(side, "namespace", "-n", NAMESPACE),
    ]
    return snaps


def run(side: Side, parity_catalog: Callable[[Side], None]) -> Snapshots:
    """The scenario: serve the catalogs, wait until every one is listed, then collect twice
    and keep the second read once it equals the first (nothing is still changing)."""
    parity_catalog(side)
    directory = side.log_dir / "pm-catalog"
    if not directory.exists():
        write_showcase(directory)
    side.catalog(GLOBAL_CATALOG, directory)
    side.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    side.catalog(OWN_CATALOG, directory, NAMESPACE, OWN_LABELS)
    wait(lambda: complete(side), TIMEOUT, "every catalog's PackageManifests listed")
    previous = collect(side)

    def settled() -> Snapshots | None:
        nonlocal previous
        current = collect(side)
        same = all(normalize(current[p]) == normalize(previous[p]) for p in current)
        previous = current
        return current if same else None

    found: Snapshots = wait(settled, 60, "two equal reads of the PackageManifest API", 1.0)
    return found
