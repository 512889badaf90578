"""Random objects derived from the community corpus, for the fuzz tests of the pure decisions.

A real object (a CSV of a corpus bundle, a corpus package's catalog) is the seed; `mutated`
then breaks it the way careless or hostile input does: a field removed, a value of the wrong
type (None, a number, a list, a map, unicode text), an emptied list or map. The seeds are
fixed (sorted, a few small packages) and `make test` runs them derandomized (the thorough
Hypothesis profile, tests/conftest.py), so it is deterministic; a bare `pytest` draws afresh.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from olm.catalog.formats import load
from olm.catalog.model import Catalog
from tests.support.paths import SHARED

CORPUS = SHARED / "corpus" / "community-operators"
# Small packages with replaces chains, skips, several channels, global and own-namespace
# install modes, required and owned CRDs: enough variety, quick to read and to resolve.
PACKAGES = (
    "operators/etcd",
    "operators/awss3-operator-registry",
    "operators/apicurito",
    "operators/hawtio-operator",
)
MAX_CSVS = 40

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.sampled_from(["", " ", "😀", "ünï", "a" * 300, "-1", "True", "null", "{}"]),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)


@functools.cache
def catalogs() -> tuple[tuple[str, Catalog], ...]:
    """(path, catalog) of each corpus package used as a seed; empty without the corpus."""
    if not CORPUS.is_dir():
        return ()
    return tuple((path, load(CORPUS / path)) for path in PACKAGES)


@functools.cache
def corpus_csvs() -> tuple[dict[str, Any], ...]:
    """The CSVs of the seed packages' bundles (at most MAX_CSVS, in a fixed order)."""
    found: list[dict[str, Any]] = []
    for _, catalog in catalogs():
        for package in sorted(catalog.packages.values(), key=lambda p: p.name):
            for name in sorted(package.bundles):
                csv = package.bundles[name].csv
                if csv is not None:
                    found.append(csv)
    return tuple(found[:MAX_CSVS])


def _slots(obj: Any, depth: int = 0) -> Iterator[tuple[Any, Any]]:
    """Every (container, key or index) below `obj`, down to a depth worth breaking."""
    if depth > 8:
        return
    items: Any
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list):
        items = list(enumerate(obj))
    else:
        return
    for key, value in items:
        yield obj, key
        yield from _slots(value, depth + 1)


def _same_type(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the JSON type of `value`: what a schema that types the field admits."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=-5, max_value=2**31)
    if isinstance(value, float):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(value, str):
        return st.one_of(
            st.text(max_size=6),
            st.sampled_from(["", " ", "😀", "ünï", "a" * 300, "-1", "v1", "0.0.0", "*"]),
        )
    if isinstance(value, list):
        return st.integers(0, len(value)).map(lambda n: copy.deepcopy(value[:n]))
    if isinstance(value, dict):
        return st.just({})
    return st.none()


@st.composite
def mutated(draw: st.DrawFn, seed: Any, max_changes: int = 3, wild: bool = False) -> Any:
    """A copy of `seed` with up to `max_changes` things broken in it: a key removed, a list
    shortened or a map emptied, a value changed. With `wild`, values change type too (for
    free-form fields no schema types); without, they keep their JSON type."""
    obj = copy.deepcopy(seed)
    for _ in range(draw(st.integers(0, max_changes))):
        slots = list(_slots(obj))
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        if isinstance(container, dict) and draw(st.integers(0, 3)) == 0:
            del container[key]
        else:
            container[key] = draw(junk if wild else _same_type(container[key]))
    return obj


# What a decision about Subscriptions reads of a CSV: the rest is weight.
SLIM_SPEC = ("version", "replaces", "skips", "customresourcedefinitions", "installModes")


@functools.cache
def slim_csvs() -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "apiVersion": csv.get("apiVersion"),
            "kind": csv.get("kind"),
            "metadata": {"name": csv["metadata"]["name"]},
            "spec": {k: v for k, v in (csv.get("spec") or {}).items() if k in SLIM_SPEC},
        }
        for csv in corpus_csvs()
    )


@st.composite
def corpus_csv(
    draw: st.DrawFn, namespace: str = "ns", max_changes: int = 3, slim: bool = False
) -> dict[str, Any]:
    """A corpus CSV, placed in `namespace`, mutated (`slim`: only what resolution reads)."""
    seeds = slim_csvs() if slim else corpus_csvs()
    seed = copy.deepcopy(draw(st.sampled_from(seeds))) if seeds else {"metadata": {"name": "x"}}
    meta = seed.setdefault("metadata", {})
    meta.update(namespace=namespace, uid=f"uid-{meta.get('name', 'x')}")
    csv: dict[str, Any] = draw(mutated(seed, max_changes))
    if not isinstance(csv.get("metadata"), dict):
        csv["metadata"] = {}
    # The API server guarantees a name and namespace on every stored object.
    csv["metadata"]["name"] = str(csv["metadata"].get("name") or "broken")
    csv["metadata"]["namespace"] = namespace
    return csv


# Every fuzz test of a decide function: as many examples as the profile says (tests/conftest.py:
# 1,000 under make test, the same ones on every run), a failure reported as found, not shrunk.
FUZZ_SETTINGS = settings(
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a failure is reported as found, not shrunk
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
