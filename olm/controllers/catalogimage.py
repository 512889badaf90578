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
consecutive failures are counted so the decision can back off. Unpacked bundles are kept per
CatalogSource while its catalog (of any digest) still references their image; a failed unpack
becomes a warning `Problem` on the catalog (BUNDLE_UNPACK_RULE) and is tried again when asked
after a backoff. The catalog a Subscription reads is changed only by swapping whole lists
(a bundle's `properties`, the catalog's `problems`), so a reader never sees half a change.
"""

from __future__ import annotations

import base64
import json
import logging
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from olm.api.backoff import exponential_backoff
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
UNPACK_RETRY_SECONDS = 5.0  # after a failed unpack; doubled each time, up to the maximum
UNPACK_RETRY_MAX_SECONDS = 300.0  # OLM retries a failed unpack after 5 minutes
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


@dataclass(frozen=True)
class UnpackFailure:
    message: str
    attempts: int
    retry_at: float  # ImageCatalogs.clock() after which a request starts another attempt


def unpack_retry_delay(attempts: int) -> float:
    """The backoff after `attempts` failed unpacks of one bundle image."""
    return exponential_backoff(attempts, UNPACK_RETRY_SECONDS, UNPACK_RETRY_MAX_SECONDS)


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


def needs_unpacking(bundle: Bundle) -> bool:
    """A bundle known by image only: its objects come from unpacking the image."""
    return bool(bundle.image) and not bundle.props(BUNDLE_OBJECT)


def images_to_unpack(catalog: Catalog) -> set[str]:
    """The bundle images of the catalog's bundles that have no inline objects."""
    return {
        b.image for p in catalog.packages.values() for b in p.bundles.values() if needs_unpacking(b)
    }


def _object_properties(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": BUNDLE_OBJECT,
            "value": {"data": base64.b64encode(json.dumps(o, sort_keys=True).encode()).decode()},
        }
        for o in objects
    ]


def _unpack_problem(catalog: Catalog, image: str, message: str) -> list[Problem]:
    return [
        Problem(
            BUNDLE_UNPACK_RULE,
            f"bundle image {image} of {bundle.name} could not be unpacked: {message}",
            "push a registry+v1 bundle image there",
            path=image,
            location=f"{package.name}/{bundle.name}",
            level="warning",
        )
        for package in catalog.packages.values()
        for bundle in package.bundles.values()
        if bundle.image == image and needs_unpacking(bundle)
    ]


def inline_unpacked(
    catalog: Catalog,
    objects: Mapping[str, list[dict[str, Any]]],
    failures: Mapping[str, str] | None = None,
) -> bool:
    """Inline the unpacked objects of each bundle whose image is in `objects` (and that has
    none yet), and say why for those in `failures` (a warning Problem, BUNDLE_UNPACK_RULE,
    instead of any earlier one for that image). Lists are swapped, never changed in place.
    True when the catalog changed."""
    failures = failures or {}
    changed = False
    for package in catalog.packages.values():
        for bundle in package.bundles.values():
            if needs_unpacking(bundle) and bundle.image in objects:
                bundle.properties = [*bundle.properties, *_object_properties(objects[bundle.image])]
                changed = True
    settled = set(objects) | set(failures)
    problems = [
        p for p in catalog.problems if not (p.rule == BUNDLE_UNPACK_RULE and p.path in settled)
    ]
    for image, message in sorted(failures.items()):
        problems += _unpack_problem(catalog, image, message)
    if problems != catalog.problems:
        catalog.problems = problems
        changed = True
    return changed


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
    """Catalog images read for the CatalogSource controller, by (namespace, name), and the
    bundle images unpacked for any catalog when a Subscription needs them."""

    def __init__(
        self,
        cache: BlobCache | None = None,
        timeout: float = PULL_TIMEOUT_SECONDS,
        retries: int = PULL_RETRIES,
        account: tuple[str, str] | None = None,
        workers: int = UNPACK_WORKERS,
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
        # The catalog each CatalogSource serves now (set by `keep`), where unpacked bundles go.
        self._served: dict[tuple[str, str], Catalog] = {}
        # The pull secrets' docker configs of each image catalog's last read.
        self._configs: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        # Bundle images unpacked for each CatalogSource's catalog: image -> objects.
        self._bundles: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
        self._unpack_failures: dict[tuple[str, str], dict[str, UnpackFailure]] = {}
        self._unpacking: set[tuple[tuple[str, str], str]] = set()
        self._slots = threading.BoundedSemaphore(workers)
        # Called (from an unpack thread) with the CatalogSource's key when one of its bundle
        # images was unpacked or failed: the controller wakes the namespaces it serves.
        self.on_unpacked: Callable[[tuple[str, str]], None] | None = None
        self.clock: Callable[[], float] = time.monotonic  # for the unpack backoff

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._last.pop(key, None)
            self._failures.pop(key, None)
            self._served.pop(key, None)
            self._configs.pop(key, None)
            self._bundles.pop(key, None)
            self._unpack_failures.pop(key, None)

    def _failed(self, key: tuple[str, str], failure: Failure) -> Fetched:
        with self._lock:
            attempts = self._failures[key] = self._failures.get(key, 0) + 1
        return Fetched(failure=failure, attempts=attempts)

    # ----- bundle images, unpacked when asked ---------------------------------------------------

    def keep(self, key: tuple[str, str], catalog: Catalog) -> None:
        """`catalog` is what the CatalogSource serves now (any source type): inline the bundle
        images unpacked before that it still references, forget the others, and say again
        why the failed ones failed."""
        with self._lock:
            wanted = images_to_unpack(catalog) | {
                b.image
                for p in catalog.packages.values()
                for b in p.bundles.values()
                if b.image and b.image in self._bundles.get(key, {})
            }
            known = {i: o for i, o in self._bundles.get(key, {}).items() if i in wanted}
            failed = {i: f for i, f in self._unpack_failures.get(key, {}).items() if i in wanted}
            self._bundles[key], self._unpack_failures[key] = known, failed
            self._served[key] = catalog
            inline_unpacked(catalog, known, {i: f.message for i, f in failed.items()})

    def unpacked(self, key: tuple[str, str]) -> frozenset[str]:
        """The bundle images unpacked for the CatalogSource (kept while referenced)."""
        with self._lock:
            return frozenset(self._bundles.get(key, {}))

    def unpack(self, key: tuple[str, str], image: str) -> float | None:
        """A Subscription needs the bundle at `image` of the CatalogSource `key`: start its
        unpack unless it is unpacked, running, or failed less than its backoff ago. Returns
        the seconds after which asking again retries a failed one (else None); `on_unpacked`
        is called when an unpack ends."""
        with self._lock:
            catalog = self._served.get(key)
            if catalog is None or (key, image) in self._unpacking:
                return None
            if image in self._bundles.get(key, {}):  # a catalog read since: inline it now
                inline_unpacked(catalog, {image: self._bundles[key][image]})
                return None
            failure = self._unpack_failures.get(key, {}).get(image)
            if failure is not None:
                wait = failure.retry_at - self.clock()
                if wait > 0:
                    return wait
            self._unpacking.add((key, image))
            configs = list(self._configs.get(key, []))
        options = Options(
            configs=configs, cache=self.cache, timeout=self.timeout, retries=self.retries
        )
        threading.Thread(
            target=self._unpack, args=(key, image, options), name="bundle-unpack", daemon=True
        ).start()
        return None

    def _unpack(self, key: tuple[str, str], image: str, options: Options) -> None:
        objects: list[dict[str, Any]] | None = None
        try:
            with self._slots:
                log.info("unpacking bundle image %s for catalog %s/%s", image, *key)
                objects = read_bundle_image(image, options)
            message = ""
        except (ImageError, NotABundle, OSError) as exc:
            message = str(exc)
            log.warning("bundle image %s could not be unpacked: %s", image, exc)
        except Exception:  # never a dead thread without a word: a sentence, the trace in the log
            log.warning("unpacking bundle image %s failed", image, exc_info=True)
            message = "olm-py could not read the image (the olm-py log has the details)"
        with self._lock:
            self._unpacking.discard((key, image))
            catalog = self._served.get(key)
            if catalog is None:  # the CatalogSource went away meanwhile
                return
            if objects is not None:
                self._bundles.setdefault(key, {})[image] = objects
                self._unpack_failures.get(key, {}).pop(image, None)
                inline_unpacked(catalog, {image: objects})
            else:
                before = self._unpack_failures.setdefault(key, {}).get(image)
                attempts = (before.attempts if before else 0) + 1
                retry_at = self.clock() + unpack_retry_delay(attempts)
                self._unpack_failures[key][image] = UnpackFailure(message, attempts, retry_at)
                inline_unpacked(catalog, {}, {image: message})
        if self.on_unpacked is not None:
            self.on_unpacked(key)

    # ----- catalog images -----------------------------------------------------------------------

    def read(
        self, key: tuple[str, str], image: str, configs: Sequence[Mapping[str, Any]]
    ) -> Fetched:
        options = Options(
            configs=list(configs), cache=self.cache, timeout=self.timeout, retries=self.retries
        )
        with self._lock:
            self._configs[key] = list(configs)  # for the bundle images unpacked later
        try:
            reference = parse(image)
            digest = resolve(reference, options)
            pinned = f"{reference.name}@{digest}"
            with self._lock:
                last = self._last.get(key)
            if last is not None and last.image == image and last.resolved == pinned:
                catalog = last.catalog
            else:
                catalog = read_catalog_image(reference.with_digest(digest), options)
                with self._lock:
                    self._last[key] = LastRead(image, pinned, catalog)
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
