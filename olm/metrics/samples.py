"""OLM v0's object gauges as a pure function of the cached objects (no prometheus here).

OLM sets these gauges as it syncs (csv_succeeded/csv_abnormal on each CSV transition, with
the old label set deleted; the counts from its listers); computing them from the cache at
scrape time gives the same series and values, and a deleted object's series disappear with
it. Copied CSVs are excluded everywhere, as in OLM.

| metric | labels | value |
|---|---|---|
| csv_count | - | number of (non-copied) CSVs |
| csv_succeeded | namespace, name, version | 1 if phase Succeeded, else 0 |
| csv_abnormal | namespace, name, version, phase, reason | 1, only for CSVs not Succeeded |
| install_plan_count | - | number of InstallPlans |
| subscription_count | - | number of Subscriptions |
| catalog_source_count | - | number of CatalogSources |
| catalogsource_ready | namespace, name | 1 if connectionState is READY, else 0 |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.catalogsource import ConnectionState
from olm.api.csv import CsvPhase
from olm.csv.replacement import is_copy

Labels = tuple[tuple[str, str], ...]
# The version label of a CSV without spec.version: the zero semver, as OLM prints it.
NO_VERSION = "0.0.0"


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Labels
    value: float


@dataclass(frozen=True)
class Family:
    name: str
    help: str
    label_names: tuple[str, ...]
    samples: tuple[Sample, ...]


# name -> help text (OLM's wording)
HELP = {
    "csv_count": "Number of CSVs successfully registered",
    "csv_succeeded": "Successful CSV install",
    "csv_abnormal": "CSV is not installed",
    "install_plan_count": "Number of install plans",
    "subscription_count": "Number of subscriptions",
    "catalog_source_count": "Number of catalog sources",
    "catalogsource_ready": (
        "State of a CatalogSource. 1 indicates that the CatalogSource is in a READY state. "
        "0 indicates CatalogSource is in a Non READY state."
    ),
}


def _family(name: str, label_names: tuple[str, ...], samples: Iterable[Sample]) -> Family:
    return Family(name, HELP[name], label_names, tuple(sorted(samples, key=lambda s: s.labels)))


def gauges(
    csvs: Iterable[Mapping[str, Any]],
    subscriptions: Iterable[Mapping[str, Any]],
    installplans: Iterable[Mapping[str, Any]],
    catalogsources: Iterable[Mapping[str, Any]],
) -> list[Family]:
    """The object gauges for these objects, one Family per metric, samples sorted by labels."""
    own = [c for c in csvs if not is_copy(c)]
    succeeded: list[Sample] = []
    abnormal: list[Sample] = []
    for csv in own:
        namespace, name = body.key(csv)
        version = str((csv.get("spec") or {}).get("version") or NO_VERSION)
        status = csv.get("status") or {}
        phase = str(status.get("phase") or "")
        ok = phase == CsvPhase.SUCCEEDED
        succeeded.append(
            Sample(
                "csv_succeeded",
                (("namespace", namespace), ("name", name), ("version", version)),
                1.0 if ok else 0.0,
            )
        )
        if not ok:
            abnormal.append(
                Sample(
                    "csv_abnormal",
                    (
                        ("namespace", namespace),
                        ("name", name),
                        ("version", version),
                        ("phase", phase),
                        ("reason", str(status.get("reason") or "")),
                    ),
                    1.0,
                )
            )
    sources = list(catalogsources)
    ready = []
    for source in sources:
        namespace, name = body.key(source)
        state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
        ready.append(
            Sample(
                "catalogsource_ready",
                (("namespace", namespace), ("name", name)),
                1.0 if state == ConnectionState.READY else 0.0,
            )
        )

    def count(name: str, items: Iterable[Any]) -> Family:
        return _family(name, (), [Sample(name, (), float(sum(1 for _ in items)))])

    return [
        count("csv_count", own),
        _family("csv_succeeded", ("namespace", "name", "version"), succeeded),
        _family("csv_abnormal", ("namespace", "name", "version", "phase", "reason"), abnormal),
        count("install_plan_count", installplans),
        count("subscription_count", subscriptions),
        count("catalog_source_count", sources),
        _family("catalogsource_ready", ("namespace", "name"), ready),
    ]
