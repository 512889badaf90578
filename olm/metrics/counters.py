"""OLM v0's counters and summaries, as process-wide state the controllers add to.

Names and labels are OLM's (pkg/metrics/metrics.go), plus controller-runtime's
`controller_runtime_reconcile_total` and client-go's `leader_election_master_status`:

| metric | type | labels | incremented |
|---|---|---|---|
| csv_upgrade_count | counter | - | when a CSV moves to Replacing |
| subscription_sync_total | counter | name, installed, channel, package, approval | per Subscription sync; the old label set is dropped when one of those values changes and when the Subscription is deleted |
| olm_resolution_duration_seconds | summary | outcome (succeeded, failed) | per resolution of a namespace's Subscriptions |
| installplan_warnings_total | counter | - | per API warning while applying an InstallPlan step |
| catalog_source_snapshots_total | counter | namespace, name | per catalog read by a resolution |
| controller_runtime_reconcile_total | counter | controller, result | per reconcile (success, error, requeue_after) |

Invariant: every method is thread-safe (workers call them concurrently) and cheap; nothing
here does I/O. `COUNTERS` is the one instance `olm run` serves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from olm.api import body

SubscriptionLabels = tuple[str, str, str, str, str]  # name, installed, channel, package, approval
SUBSCRIPTION_LABELS = ("name", "installed", "channel", "package", "approval")


def subscription_labels(subscription: Mapping[str, Any]) -> SubscriptionLabels:
    spec = subscription.get("spec") or {}
    status = subscription.get("status") or {}
    return (
        body.name(subscription),
        str(status.get("installedCSV") or ""),
        str(spec.get("channel") or ""),
        str(spec.get("name") or ""),
        str(spec.get("installPlanApproval") or ""),
    )


class Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.csv_upgrades = 0.0
        self.installplan_warnings = 0.0
        self.subscription_syncs: dict[SubscriptionLabels, float] = {}
        # (namespace, name) -> the label set its counter carries now
        self._subscription_keys: dict[tuple[str, str], SubscriptionLabels] = {}
        self.resolutions: dict[str, tuple[int, float]] = {}  # outcome -> (count, sum)
        self.snapshots: dict[tuple[str, str], float] = {}  # (namespace, name)
        self.reconciles: dict[tuple[str, str], float] = {}  # (controller, result)

    def csv_upgraded(self) -> None:
        with self._lock:
            self.csv_upgrades += 1

    def installplan_warning(self, count: int = 1) -> None:
        with self._lock:
            self.installplan_warnings += count

    def subscriptions_synced(
        self, namespace: str, subscriptions: Iterable[Mapping[str, Any]]
    ) -> None:
        """One sync of each of `subscriptions` (all those of `namespace`); the label sets of
        Subscriptions that changed their labels or are gone are dropped first, as OLM does."""
        with self._lock:
            seen: set[tuple[str, str]] = set()
            for subscription in subscriptions:
                labels = subscription_labels(subscription)
                key = (namespace, labels[0])
                seen.add(key)
                old = self._subscription_keys.get(key)
                if old is not None and old != labels:
                    self._drop(old, key)
                self._subscription_keys[key] = labels
                self.subscription_syncs[labels] = self.subscription_syncs.get(labels, 0.0) + 1
            for key in [k for k in self._subscription_keys if k[0] == namespace and k not in seen]:
                self._drop(self._subscription_keys.pop(key), key)

    def _drop(self, labels: SubscriptionLabels, key: tuple[str, str]) -> None:
        # Another Subscription of the same name elsewhere may share the label set (OLM's
        # labels carry no namespace): keep it while one does.
        if not any(v == labels for k, v in self._subscription_keys.items() if k != key):
            self.subscription_syncs.pop(labels, None)

    def resolution(self, seconds: float, succeeded: bool) -> None:
        outcome = "succeeded" if succeeded else "failed"
        with self._lock:
            count, total = self.resolutions.get(outcome, (0, 0.0))
            self.resolutions[outcome] = (count + 1, total + seconds)

    def catalog_snapshot(self, namespace: str, name: str) -> None:
        with self._lock:
            self.snapshots[(namespace, name)] = self.snapshots.get((namespace, name), 0.0) + 1

    def catalog_deleted(self, namespace: str, name: str) -> None:
        with self._lock:
            self.snapshots.pop((namespace, name), None)

    def reconciled(self, controller: str, result: str) -> None:
        with self._lock:
            key = (controller, result)
            self.reconciles[key] = self.reconciles.get(key, 0.0) + 1

    def copy(self) -> Counters:
        """A consistent copy to render from."""
        with self._lock:
            other = Counters()
            other.csv_upgrades = self.csv_upgrades
            other.installplan_warnings = self.installplan_warnings
            other.subscription_syncs = dict(self.subscription_syncs)
            other.resolutions = dict(self.resolutions)
            other.snapshots = dict(self.snapshots)
            other.reconciles = dict(self.reconciles)
            return other


COUNTERS = Counters()
