"""The I/O of `spec.image` catalogs for the CatalogSource controller: resolve the tag to a
digest (one HEAD request), and only when the digest differs from the last read pull the image
in-process (olm.image) and read the file-based catalog at the path its
`operators.operatorframework.io.index.configs.v1` label names (or, for a legacy SQLite index
image, the database its `operators.operatorframework.io.index.database.v1` label names). Bundles that come by image
only (no inline objects) are unpacked in-process too, and their objects inlined. No registry
pod, no unpack Job.

Invariants: a steady image costs one HEAD per poll and nothing else; the last catalog read is
kept per CatalogSource with the digest it came from; image errors become `Failure`s whose
summary is olm.image's own sentence (the raw text stays in `detail`, for the debug log);
consecutive failures are counted so the decision can back off.
"""

from __future__ import annotations

import base64
import json
import logging
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from olm.catalog.fbc import load_fbc
from olm.catalog.model import Bundle, Catalog, Problem
from olm.catalog.sqlite import load_sqlite
from olm.catalog.yamlio import DocumentError, iter_documents
from olm.catalogsource.decide import Fetched
from olm.catalogsource.failures import Failure, FailureKind
from olm.catalogsource.source import BUNDLE_UNPACK_RULE
from olm.image.auth import own_service_account, pull_secret_names
from olm.image.cache import BlobCache
from olm.image.errors import TRANSIENT, ImageError, ImageErrorKind
from olm.image.pull import Options, label_of, pull, resolve
from olm.image.reference import Reference, parse
from olm.kube.errors import GatewayError
from olm.kube.protocol import KubeGateway

log = logging.getLogger("olm.catalogsource")

INDEX_LABEL = "operators.operatorframework.io.index.configs.v1"
DATABASE_LABEL = "operators.operatorframework.io.index.database.v1"
MANIFESTS_LABEL = "operators.operatorframework.io.bundle.manifests.v1"
BUNDLE_OBJECT = "olm.bundle.object"
UNPACK_WORKERS = 4
PULL_TIMEOUT_SECONDS = 20.0
PULL_RETRIES = 1  # the controller backs off between reads; a worker is not held for long

IMAGE_FAILURES = {
    ImageErrorKind.INVALID_REFERENCE: FailureKind.IMAGE_REFERENCE,
    ImageErrorKind.UNREACHABLE: FailureKind.REGISTRY_UNREACHABLE,
    ImageErrorKind.TIMEOUT: FailureKind.REGISTRY_TIMEOUT,
    ImageErrorKind.SERVER_ERROR: FailureKind.REGISTRY_ERROR,
    ImageErrorKind.NOT_FOUND: FailureKind.IMAGE_NOT_FOUND,
    ImageErrorKind.UNAUTHORIZED: FailureKind.IMAGE_UNAUTHORIZED,
    ImageErrorKind.CORRUPT: FailureKind.IMAGE_CORRUPT,
    ImageErrorKind.UNSUPPORTED: FailureKind.IMAGE_UNSUPPORTED,
}


class NotACatalog(Exception):
    """The image was pulled, but holds no catalog where its labels say."""


class NotABundle(Exception):
    """The bundle image was pulled, but holds no bundle manifests."""


@dataclass(frozen=True)
class LastRead:
    image: str
    resolved: str
    catalog: Catalog
    incomplete: bool = False  # some bundle images could not be unpacked: try them again


def read_bundle_image(image: str, options: Options) -> list[dict[str, Any]]:
    """The objects under a bundle image's manifests directory (its label's path, else
    /manifests), the ClusterServiceVersion among them."""
    reference = parse(image)
    labels = label_of(reference, options).labels
    path = "/" + labels.get(MANIFESTS_LABEL, "manifests/").strip("/")
    work = options.cache.root / "unpack"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as temporary:
        root = Path(temporary)
        pull(reference, root, options, only=path)
        manifests = root / path.strip("/")
        if not manifests.is_dir():
            raise NotABundle(f"it has no {path} directory: it is not a registry+v1 bundle image")
        objects = []
        for file in sorted(p for p in manifests.rglob("*") if p.is_file()):
            try:
                documents = list(iter_documents(file.read_text(errors="replace")))
            except DocumentError as exc:
                raise NotABundle(f"{path}/{file.name} cannot be read ({exc})") from exc
            objects += [d for _, d in documents if isinstance(d, dict)]
    if not any(o.get("kind") == "ClusterServiceVersion" for o in objects):
        raise NotABundle(f"its {path} directory has no ClusterServiceVersion")
    return objects


def _needs_unpacking(bundle: Bundle) -> bool:
    return bool(bundle.image) and not bundle.props(BUNDLE_OBJECT)


def _inline(bundle: Bundle, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        data = base64.b64encode(json.dumps(obj, sort_keys=True).encode()).decode()
        bundle.properties.append({"type": BUNDLE_OBJECT, "value": {"data": data}})


def read_catalog_image(reference: Reference, options: Options) -> Catalog:
    """Pull the image (pinned by digest) and read its file-based catalog."""
    labels = label_of(reference, options).labels
    path = labels.get(INDEX_LABEL)
    database = labels.get(DATABASE_LABEL)
    if not path and not database:
        raise NotACatalog(f"the image has no label {INDEX_LABEL} (nor {DATABASE_LABEL})")
    work = options.cache.root / "unpack"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as temporary:
        root = Path(temporary)
        if not path and database:  # a legacy SQLite index image
            pull(reference, root, options, only=database)
            file = root / database.strip("/")
            if not file.is_file():
                raise NotACatalog(
                    f"its label {DATABASE_LABEL} names {database}, which is not a file in the image"
                )
            return load_sqlite(file)
        assert path is not None
        pull(reference, root, options, only=path)
        catalog_dir = root / path.strip("/")
        if not catalog_dir.is_dir():
            raise NotACatalog(
                f"its label {INDEX_LABEL} names {path}, which is not a directory in the image"
            )
        return load_fbc(catalog_dir)


def own_pull_secrets(
    gateway: KubeGateway, account: tuple[str, str] | None
) -> tuple[str, tuple[str, ...]] | None:
    """(namespace, names) of the `imagePullSecrets` of olm-py's own ServiceAccount, used after
    the CatalogSource's spec.secrets (OLM's unpack Jobs pull with them). One GET per pull; an
    account that cannot be read adds nothing (a pull that needs it then says what it lacks)."""
    if account is None:
        return None
    namespace, name = account
    try:
        service_account = gateway.get("v1", "ServiceAccount", namespace, name)
    except GatewayError as exc:
        log.debug("ServiceAccount %s/%s not read: %s", namespace, name, exc)
        return None
    return namespace, pull_secret_names(service_account)


class ImageCatalogs:
    """Catalog images read for the CatalogSource controller, by (namespace, name)."""

    def __init__(
        self,
        cache: BlobCache | None = None,
        timeout: float = PULL_TIMEOUT_SECONDS,
        retries: int = PULL_RETRIES,
        account: tuple[str, str] | None = None,
    ) -> None:
        # olm-py's own ServiceAccount (namespace, name), whose imagePullSecrets are also used;
        # found in the environment or the token mount unless given.
        self.account = account if account is not None else own_service_account()
        self.cache = cache or BlobCache()
        self.timeout = timeout
        self.retries = retries
        self._lock = threading.Lock()
        self._last: dict[tuple[str, str], LastRead] = {}
        self._failures: dict[tuple[str, str], int] = {}
        # Bundle images unpacked for each CatalogSource's catalog: image -> objects.
        self._bundles: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._last.pop(key, None)
            self._failures.pop(key, None)
            self._bundles.pop(key, None)

    def _failed(self, key: tuple[str, str], failure: Failure) -> Fetched:
        with self._lock:
            attempts = self._failures[key] = self._failures.get(key, 0) + 1
        return Fetched(failure=failure, attempts=attempts)

    def _unpack_bundles(self, key: tuple[str, str], catalog: Catalog, options: Options) -> bool:
        """Inline the objects of every bundle that has an image and no objects (OLM's unpack
        Job, done in-process). A bundle image that cannot be unpacked leaves its bundle
        without objects and a warning on the catalog; True when that happened."""
        with self._lock:
            known = dict(self._bundles.get(key, {}))
        wanted = sorted(
            {
                b.image
                for p in catalog.packages.values()
                for b in p.bundles.values()
                if _needs_unpacking(b)
            }
        )
        missing = [image for image in wanted if image not in known]
        problems: dict[str, str] = {}

        def unpack(image: str) -> tuple[str, list[dict[str, Any]] | None]:
            try:
                return image, read_bundle_image(image, options)
            except (ImageError, NotABundle, OSError) as exc:
                problems[image] = str(exc)
                log.warning("bundle image %s could not be unpacked: %s", image, exc)
                return image, None

        if missing:
            with ThreadPoolExecutor(max_workers=UNPACK_WORKERS) as pool:
                for image, objects in pool.map(unpack, missing):
                    if objects is not None:
                        known[image] = objects
        for package in catalog.packages.values():
            for bundle in package.bundles.values():
                if not _needs_unpacking(bundle):
                    continue
                if bundle.image in known:
                    _inline(bundle, known[bundle.image])
                else:
                    catalog.problems.append(
                        Problem(
                            BUNDLE_UNPACK_RULE,
                            f"bundle image {bundle.image} of {bundle.name} could not be unpacked: "
                            f"{problems.get(bundle.image, 'unknown error')}",
                            "push a registry+v1 bundle image there",
                            path=bundle.image,
                            location=f"{package.name}/{bundle.name}",
                            level="warning",
                        )
                    )
        with self._lock:
            self._bundles[key] = {image: known[image] for image in wanted if image in known}
        return bool(problems)

    def read(
        self, key: tuple[str, str], image: str, configs: Sequence[Mapping[str, Any]]
    ) -> Fetched:
        options = Options(
            configs=list(configs), cache=self.cache, timeout=self.timeout, retries=self.retries
        )
        try:
            reference = parse(image)
            digest = resolve(reference, options)
            pinned = f"{reference.name}@{digest}"
            with self._lock:
                last = self._last.get(key)
            if (
                last is not None
                and last.image == image
                and last.resolved == pinned
                and not last.incomplete
            ):
                catalog = last.catalog
            else:
                catalog = read_catalog_image(reference.with_digest(digest), options)
                incomplete = self._unpack_bundles(key, catalog, options)
                with self._lock:
                    self._last[key] = LastRead(image, pinned, catalog, incomplete)
        except ImageError as exc:
            kind = IMAGE_FAILURES.get(exc.kind, FailureKind.REGISTRY_ERROR)
            failed = self._failed(
                key, Failure(kind, detail=exc.detail or str(exc), summary=str(exc))
            )
            with self._lock:
                last = self._last.get(key)
            if exc.kind in TRANSIENT and last is not None and last.image == image:
                return replace(failed, catalog=last.catalog, resolved=last.resolved)
            return failed
        except NotACatalog as exc:
            return self._failed(
                key, Failure(FailureKind.NOT_A_CATALOG, detail=str(exc), summary=str(exc))
            )
        except OSError as exc:  # the local cache: disk full, permissions
            return self._failed(
                key,
                Failure(
                    FailureKind.REGISTRY_ERROR,
                    detail=repr(exc),
                    summary=f"olm-py could not write its image cache in {self.cache.root}",
                ),
            )
        except Exception as exc:  # never a traceback loop: a sentence, and the trace in the log
            log.warning("reading catalog image %s failed", image, exc_info=True)
            return self._failed(
                key,
                Failure(
                    FailureKind.IMAGE_UNSUPPORTED,
                    detail=repr(exc),
                    summary="olm-py could not read the image (the olm-py log has the details)",
                ),
            )
        with self._lock:
            self._failures.pop(key, None)
        return Fetched(catalog=catalog, resolved=pinned)
