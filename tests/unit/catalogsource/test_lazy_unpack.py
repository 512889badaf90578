"""Bundle images are unpacked when a Subscription needs them, not when the catalog is read:
what needs unpacking, inlining the objects and the failures into the catalog served, the
backoff, and the unpacker's bookkeeping per CatalogSource (with the pull replaced)."""

from __future__ import annotations

import copy
import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from olm.catalog.model import Catalog
from olm.catalog.samples import build
from olm.catalogsource.source import BUNDLE_UNPACK_RULE
from olm.controllers import catalogimage
from olm.controllers.catalogimage import (
    ImageCatalogs,
    NotABundle,
    images_to_unpack,
    inline_unpacked,
    needs_unpacking,
    unpack_retry_delay,
)
from olm.image.cache import BlobCache
from olm.image.pull import Options

V1, V2 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
IMAGES = {V1: "127.0.0.1:5000/team/bundle:v0.0.1", V2: "127.0.0.1:5000/team/bundle:v0.0.2"}
KEY = ("olm", "samples")
SAMPLES = build()


def by_image(*names: str) -> Catalog:
    catalog = copy.deepcopy(SAMPLES)
    for bundle in catalog.packages["memcached-operator"].bundles.values():
        if bundle.name in names:
            bundle.image = IMAGES[bundle.name]
            bundle.properties = [p for p in bundle.properties if p["type"] != "olm.bundle.object"]
    return catalog


def objects_of(name: str) -> list[dict[str, Any]]:
    return SAMPLES.packages["memcached-operator"].bundles[name].objects


def bundle(catalog: Catalog, name: str) -> Any:
    return catalog.packages["memcached-operator"].bundles[name]


def unpack_problems(catalog: Catalog) -> list[str]:
    return [p.location for p in catalog.problems if p.rule == BUNDLE_UNPACK_RULE]


def test_what_needs_unpacking() -> None:
    catalog = by_image(V1, V2)
    assert images_to_unpack(catalog) == set(IMAGES.values())
    assert needs_unpacking(bundle(catalog, V1))
    assert images_to_unpack(SAMPLES) == set(), "inline bundles need nothing"
    assert images_to_unpack(by_image(V2)) == {IMAGES[V2]}


def test_inlining_objects_and_failures() -> None:
    catalog = by_image(V1, V2)
    properties = bundle(catalog, V1).properties
    assert inline_unpacked(catalog, {IMAGES[V1]: objects_of(V1)}, {IMAGES[V2]: "no such tag"})
    assert bundle(catalog, V1).objects == objects_of(V1)
    assert bundle(catalog, V1).properties is not properties, "swapped, not changed in place"
    assert unpack_problems(catalog) == [f"memcached-operator/{V2}"]
    (problem,) = catalog.problems
    assert (
        problem.message == f"bundle image {IMAGES[V2]} of {V2} could not be unpacked: no such tag"
    )
    assert problem.level == "warning"
    # The same again changes nothing; the fixed image replaces its problem.
    assert not inline_unpacked(catalog, {IMAGES[V1]: objects_of(V1)}, {IMAGES[V2]: "no such tag"})
    assert inline_unpacked(catalog, {IMAGES[V2]: objects_of(V2)})
    assert unpack_problems(catalog) == [] and bundle(catalog, V2).objects == objects_of(V2)


@pytest.mark.parametrize(
    ("attempts", "delay"), [(1, 5.0), (2, 10.0), (3, 20.0), (7, 300.0), (30, 300.0)]
)
def test_the_backoff(attempts: int, delay: float) -> None:
    assert unpack_retry_delay(attempts) == delay


class FakePulls:
    """read_bundle_image replaced: objects by image, an error for the others; counts pulls."""

    def __init__(self) -> None:
        self.objects: dict[str, list[dict[str, Any]]] = {}
        self.pulled: list[str] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, image: str, options: Options) -> list[dict[str, Any]]:
        self.gate.wait(10)
        self.pulled.append(image)
        if image not in self.objects:
            raise NotABundle("it has no /manifests directory")
        return self.objects[image]


@pytest.fixture
def pulls(monkeypatch: pytest.MonkeyPatch) -> FakePulls:
    fake = FakePulls()
    monkeypatch.setattr(catalogimage, "read_bundle_image", fake)
    return fake


def unpacker(tmp_path: Path) -> tuple[ImageCatalogs, queue.Queue[tuple[str, str]]]:
    images = ImageCatalogs(BlobCache(tmp_path), account=("olm", "olm-py"))
    ended: queue.Queue[tuple[str, str]] = queue.Queue()
    images.on_unpacked = ended.put
    return images, ended


def test_unpacked_when_asked_once(pulls: FakePulls, tmp_path: Path) -> None:
    images, ended = unpacker(tmp_path)
    pulls.objects[IMAGES[V2]] = objects_of(V2)
    catalog = by_image(V1, V2)
    images.keep(KEY, catalog)
    assert pulls.pulled == [], "keeping the catalog pulls nothing"
    pulls.gate.clear()
    assert images.unpack(KEY, IMAGES[V2]) is None
    assert images.unpack(KEY, IMAGES[V2]) is None, "running already: not started twice"
    pulls.gate.set()
    assert ended.get(timeout=10) == KEY
    assert pulls.pulled == [IMAGES[V2]]
    assert bundle(catalog, V2).objects == objects_of(V2)
    assert bundle(catalog, V1).objects == [], "nobody asked for it"
    assert images.unpack(KEY, IMAGES[V2]) is None and ended.empty()
    assert pulls.pulled == [IMAGES[V2]]


def test_a_new_catalog_keeps_what_it_still_references(pulls: FakePulls, tmp_path: Path) -> None:
    images, ended = unpacker(tmp_path)
    pulls.objects = {IMAGES[V1]: objects_of(V1), IMAGES[V2]: objects_of(V2)}
    images.keep(KEY, by_image(V1, V2))
    for name in (V1, V2):
        images.unpack(KEY, IMAGES[name])
        ended.get(timeout=10)
    newer = by_image(V2)  # a new digest: V1 now comes inline
    images.keep(KEY, newer)
    assert bundle(newer, V2).objects == objects_of(V2), "inlined again without a pull"
    assert images.unpacked(KEY) == {IMAGES[V2]}
    assert sorted(pulls.pulled) == sorted(IMAGES.values())


def test_a_failed_unpack_backs_off_then_recovers(pulls: FakePulls, tmp_path: Path) -> None:
    images, ended = unpacker(tmp_path)
    catalog = by_image(V2)
    images.keep(KEY, catalog)
    images.unpack(KEY, IMAGES[V2])
    assert ended.get(timeout=10) == KEY
    assert unpack_problems(catalog) == [f"memcached-operator/{V2}"]
    wait = images.unpack(KEY, IMAGES[V2])
    assert wait is not None and 0 < wait <= 5.0, "asked again within the backoff: not pulled"
    assert pulls.pulled == [IMAGES[V2]]
    again = by_image(V2)  # the failure is said on a catalog read since, too
    images.keep(KEY, again)
    assert unpack_problems(again) == [f"memcached-operator/{V2}"]
    # The image is fixed, the backoff has passed: the next request unpacks it.
    pulls.objects[IMAGES[V2]] = objects_of(V2)
    images.clock = lambda: 1e12
    assert images.unpack(KEY, IMAGES[V2]) is None
    assert ended.get(timeout=10) == KEY
    assert unpack_problems(again) == [] and bundle(again, V2).objects == objects_of(V2)


def test_nothing_for_a_catalog_not_served(pulls: FakePulls, tmp_path: Path) -> None:
    images, ended = unpacker(tmp_path)
    assert images.unpack(KEY, IMAGES[V2]) is None
    images.keep(KEY, by_image(V2))
    images.forget(KEY)
    assert images.unpack(KEY, IMAGES[V2]) is None
    assert pulls.pulled == [] and ended.empty()
