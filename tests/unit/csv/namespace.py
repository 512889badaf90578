"""A namespace of CSVs run to rest: every CSV decided in turn, its plan carried out the way
the controller would (status written, Deployments applied and turned healthy, refusals
reported through `install_failed`), round after round on a simulated clock.

It answers the questions the phase table alone cannot: does a set of CSVs settle, in which
states, and does anything keep writing or waking after it settled?
"""

from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass, field
from typing import Any

from olm.api.csv import CsvPhase, CsvReason
from olm.csv.phase import Plan, decide, install_failed
from olm.install.deployments import refusal_message
from tests.unit.csv.world import NOW, healthy, world

STEP = datetime.timedelta(seconds=5)
REFUSAL = (
    'PATCH /apis/apps/v1/namespaces/ns1/deployments/op failed (422): Deployment.apps "op" is '
    "invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
    "must be between 1 and 65535, inclusive"
)


@dataclass
class Namespace:
    csvs: dict[str, dict[str, Any]]
    deployments: dict[str, dict[str, Any]] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)  # Deployment names the API server refuses
    stuck: set[str] = field(default_factory=set)  # Deployments that pass their deadline
    crds: dict[str, Any] | None = None
    now: datetime.datetime = NOW
    writes: list[tuple[int, str, str]] = field(default_factory=list)  # (round, csv, what)
    round: int = 0

    def plan_for(self, name: str) -> Plan:
        subject = self.csvs[name]
        others = [c for n, c in self.csvs.items() if n != name]
        return decide(
            world(
                subject, others=others, deployments=self.deployments, crds=self.crds, now=self.now
            )
        )

    def _world(self, name: str) -> Any:
        others = [c for n, c in self.csvs.items() if n != name]
        return world(
            self.csvs[name],
            others=others,
            deployments=self.deployments,
            crds=self.crds,
            now=self.now,
        )

    def _apply(self, name: str, plan: Plan) -> Plan:
        for index, deployment in enumerate(plan.apply):
            dep_name = deployment["metadata"]["name"]
            if dep_name in self.refused:
                message = refusal_message(index, deployment, REFUSAL, 422)
                return install_failed(self._world(name), message)
            current = self.deployments.get(dep_name)
            new = healthy(deployment)
            if dep_name in self.stuck:
                new["status"]["conditions"] = [
                    {"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": "late"}
                ]
            if (
                current is None
                or current["metadata"] != new["metadata"]
                or (current["spec"] != new["spec"])
            ):
                self.writes.append((self.round, name, f"deployment {dep_name}"))
            self.deployments[dep_name] = new
        return plan

    def step(self, name: str) -> None:
        if name not in self.csvs:
            return
        plan = self._apply(name, self.plan_for(name))
        if plan.status is not None:
            updated = copy.deepcopy(self.csvs[name])
            updated["status"] = plan.status
            self.csvs[name] = updated
            self.writes.append(
                (self.round, name, f"{plan.status['phase']}/{plan.status['reason']}")
            )
        if plan.delete_csv:
            self.delete(name)

    def delete(self, name: str) -> None:
        """The CSV goes, and the garbage collector takes the Deployments it still owns."""
        del self.csvs[name]
        self.writes.append((self.round, name, "deleted"))
        for dep_name, dep in list(self.deployments.items()):
            if dep["metadata"]["labels"].get("olm.owner") == name:
                del self.deployments[dep_name]

    def run(self, rounds: int = 40) -> Namespace:
        for _ in range(rounds):
            for name in sorted(self.csvs):
                self.step(name)
            self.round += 1
            self.now += STEP
        return self

    def last_write(self) -> int:
        return max((r for r, _, _ in self.writes), default=-1)

    def states(self) -> dict[str, str]:
        return {
            n: f"{(c.get('status') or {}).get('phase')}/{(c.get('status') or {}).get('reason')}"
            for n, c in self.csvs.items()
        }

    def message(self, name: str) -> str:
        return str((self.csvs[name].get("status") or {}).get("message", ""))

    def restless(self) -> dict[str, Plan]:
        """The CSVs whose next decision would still write, install, delete, wake or poll.

        A Failed install's retry is the one exception: its plan re-applies the Deployments,
        and `run` shows whether that writes anything (a refusal with the same message must
        not)."""
        found = {}
        for name in sorted(self.csvs):
            plan = self.plan_for(name)
            status = self.csvs[name].get("status") or {}
            if (
                status.get("phase") == CsvPhase.FAILED
                and status.get("reason") == CsvReason.INSTALL_COMPONENT_FAILED
            ):
                if plan.wake or plan.delete_csv or plan.annotations is not None:
                    found[name] = plan
                continue
            if (
                plan.status is not None
                or plan.apply
                or plan.delete_deployments
                or plan.delete_csv
                or plan.annotations is not None
                or plan.wake
                or plan.requeue_after is not None
            ):
                found[name] = plan
        return found
