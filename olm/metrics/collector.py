"""The Prometheus side: one collector that renders OLM's gauges (from the cache, at scrape
time) and counters (from `Counters`) under OLM's exact names, and the registry `olm run`
serves (with the process, platform and GC collectors prometheus_client provides).

prometheus_client would append `_total` to a counter named `csv_upgrade_count` and add
`_created` series; building the families by hand keeps OLM's names and nothing more.

Invariant: the object gauges are exposed only while this process leads (or when leader
election is off): a standby's cache is as full as the leader's, and two replicas reporting
the same CSVs would double every sum a dashboard takes over the metrics Service.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from olm.metrics.counters import SUBSCRIPTION_LABELS, Counters
from olm.metrics.samples import gauges

# kind -> the cached objects of that kind ("csv", "subscription", "installplan", "catalogsource")
Objects = Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]]

LEASE_HELP = "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease."


def _metric(name: str, help_text: str, typ: str) -> Metric:
    return Metric(name, help_text, typ)


class OlmCollector(Collector):
    def __init__(
        self,
        objects: Objects,
        counters: Counters,
        leading: Callable[[], bool],
        lease_name: str | None = None,
    ) -> None:
        self.objects = objects
        self.counters = counters
        self.leading = leading
        self.lease_name = lease_name

    def collect(self) -> Iterator[Metric]:
        leading = self.leading()
        if leading:
            cached = self.objects()
            for family in gauges(
                cached.get("csv", ()),
                cached.get("subscription", ()),
                cached.get("installplan", ()),
                cached.get("catalogsource", ()),
            ):
                metric = _metric(family.name, family.help, "gauge")
                for sample in family.samples:
                    metric.add_sample(sample.name, dict(sample.labels), sample.value)
                yield metric
        yield from self._counters(self.counters.copy())
        if self.lease_name is not None:
            metric = _metric("leader_election_master_status", LEASE_HELP, "gauge")
            metric.add_sample(
                "leader_election_master_status", {"name": self.lease_name}, 1.0 if leading else 0.0
            )
            yield metric

    def _counters(self, counters: Counters) -> Iterator[Metric]:
        # Untyped: the Prometheus text format of prometheus_client would name a counter family
        # csv_upgrade_count_total, and OLM's series is csv_upgrade_count (rate() works on both).
        upgrades = _metric("csv_upgrade_count", "Monotonic count of CSV upgrades", "unknown")
        upgrades.add_sample("csv_upgrade_count", {}, counters.csv_upgrades)
        yield upgrades
        syncs = _metric(
            "subscription_sync_total", "Monotonic count of subscription syncs", "counter"
        )
        for labels, value in sorted(counters.subscription_syncs.items()):
            syncs.add_sample(
                "subscription_sync_total",
                dict(zip(SUBSCRIPTION_LABELS, labels, strict=True)),
                value,
            )
        yield syncs
        resolution = _metric(
            "olm_resolution_duration_seconds",
            "The duration of a dependency resolution attempt",
            "summary",
        )
        for outcome, (count, total) in sorted(counters.resolutions.items()):
            name = "olm_resolution_duration_seconds"
            resolution.add_sample(f"{name}_sum", {"outcome": outcome}, total)
            resolution.add_sample(f"{name}_count", {"outcome": outcome}, float(count))
        yield resolution
        warnings = _metric(
            "installplan_warnings_total",
            "monotonic count of resources that generated warnings when applied as part of an "
            "InstallPlan (for example, due to deprecation)",
            "counter",
        )
        warnings.add_sample("installplan_warnings_total", {}, counters.installplan_warnings)
        yield warnings
        snapshots = _metric(
            "catalog_source_snapshots_total",
            "The number of times the catalog operator has requested a snapshot of data from a "
            "catalog source",
            "counter",
        )
        for (namespace, name), value in sorted(counters.snapshots.items()):
            snapshots.add_sample(
                "catalog_source_snapshots_total", {"namespace": namespace, "name": name}, value
            )
        yield snapshots
        reconciles = _metric(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            "counter",
        )
        for (controller, result), value in sorted(counters.reconciles.items()):
            reconciles.add_sample(
                "controller_runtime_reconcile_total",
                {"controller": controller, "result": result},
                value,
            )
        yield reconciles


def registry(collector: OlmCollector) -> CollectorRegistry:
    """A registry of its own (nothing global): OLM's metrics plus process, platform and GC."""
    reg = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=reg)
    PlatformCollector(registry=reg)
    GCCollector(registry=reg)
    reg.register(collector)
    return reg
