"""The local OCI registry `olm dev up` starts beside the control plane: Debian's
`docker-registry` (distribution 2.8) on 127.0.0.1:<free port>, storage in the cluster's state
directory, plain HTTP (loopback only). `olm dev env` names it as OLM_REGISTRY=127.0.0.1:PORT.

A second docker-registry serves the same storage over TLS (`registry-tls`, OLM_REGISTRY_TLS),
its certificate signed by the cluster's CA (OLM_REGISTRY_CA): for clients that speak HTTPS only,
such as `kubectl operator catalog add` (docs/kubectl-operator.md). An image pushed to either is
pulled from both; distribution keeps no cache in memory here, so the two never disagree.

`ensure_registry_binary` installs the Debian package when it is missing (apt-get, as the other
install steps of this project do); `config` is pure.

Once it is healthy, the samples catalog is published there as images (`publish_samples`): each
bundle as a FROM-scratch registry+v1 bundle image (`olm-py/<package>-bundle:v<version>`) and the
catalog, with those bundles by image only, as `olm-py/samples-catalog:latest`
(OLM_SAMPLES_IMAGE). `sample_images` is pure and deterministic (same catalog, same digests).
"""

from __future__ import annotations

import copy
import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from olm.api import body
from olm.catalog.documents import CSV_METADATA, bundle_csv, csv_metadata
from olm.catalog.model import Bundle, Catalog, Package
from olm.devcluster.ports import LOOPBACK
from olm.image.build import Image, scratch_image

REGISTRY = "registry"
REGISTRY_ENV = "OLM_REGISTRY"
REGISTRY_TLS = "registry-tls"
REGISTRY_TLS_ENV = "OLM_REGISTRY_TLS"
REGISTRY_CA_ENV = "OLM_REGISTRY_CA"
BINARY_NAME = "docker-registry"
DEBIAN_PACKAGE = "docker-registry"
APT_INSTALL = [
    "apt-get",
    "-o",
    "DPkg::Lock::Timeout=600",
    "install",
    "-y",
    "--no-install-recommends",
    DEBIAN_PACKAGE,
]


SAMPLES_IMAGE_ENV = "OLM_SAMPLES_IMAGE"
SAMPLES_CATALOG_REPOSITORY = "olm-py/samples-catalog"
SAMPLES_TAG = "latest"
CATALOG_LABEL = "operators.operatorframework.io.index.configs.v1"
# What `kubectl operator catalog add` reads for the CatalogSource's displayName and publisher.
DISPLAY_NAME_LABEL = "alpha.operators.operatorframework.io.index.display-name.v1"
PUBLISHER_LABEL = "alpha.operators.operatorframework.io.index.publisher.v1"
SAMPLES_DISPLAY_NAME = "olm-py samples"
SAMPLES_PUBLISHER = "olm-py"
CATALOG_ROOT = "configs"
BUNDLE_ANNOTATION = "operators.operatorframework.io.bundle."
BUNDLE_OBJECT = "olm.bundle.object"
PUBLISH_TIMEOUT_SECONDS = 5.0


class RegistryUnavailable(RuntimeError):
    """docker-registry is not installed and could not be installed; the message says how."""


def find_binary() -> Path | None:
    found = shutil.which(BINARY_NAME) or (
        "/usr/bin/docker-registry" if Path("/usr/bin/docker-registry").is_file() else None
    )
    return Path(found) if found else None


def ensure_registry_binary(install: bool = True) -> Path:
    """The docker-registry binary, installed from Debian when it is missing."""
    found = find_binary()
    if found is not None or not install:
        if found is None:
            raise RegistryUnavailable(f"{BINARY_NAME} is not installed")
        return found
    try:
        result = subprocess.run(APT_INSTALL, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RegistryUnavailable(
            f"could not run apt-get to install {DEBIAN_PACKAGE} ({exc}); install it by hand: "
            + " ".join(APT_INSTALL)
        ) from exc
    found = find_binary()
    if result.returncode != 0 or found is None:
        tail = "\n".join(result.stderr.strip().splitlines()[-3:])
        raise RegistryUnavailable(
            f"installing {DEBIAN_PACKAGE} failed ({tail}); install it by hand: "
            + " ".join(APT_INSTALL)
        )
    return found


def config(storage: Path, port: int, tls: tuple[Path, Path] | None = None) -> str:
    """docker-registry's configuration (JSON is YAML): filesystem storage, deletes allowed,
    listening on 127.0.0.1 only; over TLS with `tls` = (certificate, key)."""
    http: dict[str, Any] = {"addr": f"{LOOPBACK}:{port}", "secret": "olm-py-dev"}
    if tls is not None:
        http["tls"] = {"certificate": str(tls[0]), "key": str(tls[1])}
    return json.dumps(
        {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
            "http": http,
        },
        indent=2,
    )


def argv(binary: Path, config_path: Path) -> list[str]:
    return [str(binary), "serve", str(config_path)]


def healthy(port: int, timeout: float = 1.0, ca: Path | None = None) -> tuple[bool, str]:
    """GET /v2/ answers 200 (an open registry) or 401 (one that wants credentials); over HTTPS,
    the certificate checked against `ca`, when a CA is given."""
    scheme = "https" if ca is not None else "http"
    context = ssl.create_default_context(cafile=str(ca)) if ca is not None else None
    try:
        with urllib.request.urlopen(
            f"{scheme}://{LOOPBACK}:{port}/v2/", timeout=timeout, context=context
        ) as answer:
            return answer.status == 200, f"HTTP {answer.status}"
    except urllib.error.HTTPError as exc:
        return exc.code == 401, f"HTTP {exc.code}"
    except OSError as exc:
        return False, str(exc)


def bundle_reference(address: str, bundle: Bundle) -> str:
    """`<registry>/olm-py/<package>-bundle:v<version>`, where a sample bundle is published."""
    return f"{address}/olm-py/{bundle.package}-bundle:v{bundle.version}"


def samples_catalog_reference(address: str) -> str:
    return f"{address}/{SAMPLES_CATALOG_REPOSITORY}:{SAMPLES_TAG}"


def _file_name(obj: dict[str, Any]) -> str:
    kind = str(obj.get("kind") or "object").lower()
    name = body.name(obj) or "unnamed"
    return f"{name}.{kind}.yaml"


def bundle_image(bundle: Bundle, package: Package) -> Image:
    """A registry+v1 bundle image of a bundle whose objects are inline: /manifests (one file per
    object), /metadata/annotations.yaml, and the annotations as labels (as `olm bundle push`)."""
    channels = sorted(c.name for c in package.channels.values() if c.entry(bundle.name))
    annotations = {
        f"{BUNDLE_ANNOTATION}mediatype.v1": "registry+v1",
        f"{BUNDLE_ANNOTATION}manifests.v1": "manifests/",
        f"{BUNDLE_ANNOTATION}metadata.v1": "metadata/",
        f"{BUNDLE_ANNOTATION}package.v1": bundle.package,
        f"{BUNDLE_ANNOTATION}channels.v1": ",".join(channels),
    }
    if package.default_channel:
        annotations[f"{BUNDLE_ANNOTATION}channel.default.v1"] = package.default_channel
    files = {
        f"manifests/{_file_name(obj)}": yaml.safe_dump(obj, sort_keys=True).encode()
        for obj in bundle.objects
    }
    files["metadata/annotations.yaml"] = yaml.safe_dump(
        {"annotations": annotations}, sort_keys=True
    ).encode()
    return scratch_image(files, annotations)


def sample_images(address: str, catalog: Catalog) -> list[tuple[str, Image]]:
    """The images that publish `catalog` in the registry at `address`: one bundle image per
    bundle with inline objects, then the catalog image whose bundles name those images and
    hold no objects, only their CSV's `olm.csv.metadata` (what `opm render` of bundle images
    gives, so PackageManifests can describe them). `catalog` is not changed."""
    by_image = copy.deepcopy(catalog)
    images: list[tuple[str, Image]] = []
    for package in by_image.packages.values():
        for bundle in package.bundles.values():
            if not bundle.objects:
                continue
            reference = bundle_reference(address, bundle)
            images.append((reference, bundle_image(bundle, package)))
            csv = bundle_csv(package, bundle)
            bundle.image = reference
            bundle.properties = [p for p in bundle.properties if p.get("type") != BUNDLE_OBJECT]
            if csv is not None:
                bundle.properties.append({"type": CSV_METADATA, "value": csv_metadata(csv)})
    from olm.catalog.render import to_yaml

    files = {f"{CATALOG_ROOT}/catalog.yaml": to_yaml(by_image).encode()}
    images.append(
        (
            samples_catalog_reference(address),
            scratch_image(
                files,
                {
                    CATALOG_LABEL: "/" + CATALOG_ROOT,
                    DISPLAY_NAME_LABEL: SAMPLES_DISPLAY_NAME,
                    PUBLISHER_LABEL: SAMPLES_PUBLISHER,
                },
            ),
        )
    )
    return images


def publish_samples(address: str, cache_root: Path) -> str:
    """Push the samples catalog and its bundles to the registry at `address`; the catalog
    image's reference. Raises olm.image's ImageError when the registry refuses or is down."""
    from olm.catalog.samples import build
    from olm.image.cache import BlobCache
    from olm.image.pull import Options, push
    from olm.image.reference import parse

    options = Options(
        cache=BlobCache(cache_root),
        timeout=PUBLISH_TIMEOUT_SECONDS,
        retries=0,
        use_local_configs=False,
    )
    images = sample_images(address, build())
    for reference, image in images:
        push(parse(reference), image, options)
    return images[-1][0]


def try_publish_samples(address: str, cache_root: Path) -> tuple[str | None, str]:
    """`publish_samples`, never raising: (the catalog image, "") or (None, why it failed). The
    cluster works without the sample images, as it does without the registry."""
    from olm.image.errors import ImageError

    try:
        return publish_samples(address, cache_root), ""
    except (ImageError, OSError) as exc:
        return None, str(exc)
    except Exception as exc:  # a warning at `olm dev up`, never a failed `up`
        return None, repr(exc)
