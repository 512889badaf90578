"""`make demo`: the getting-started story on the local cluster, told with plain kubectl output.

1. Start the local control plane (building it on first use) and install olm-py's CRDs.
2. Start the olm-operator (`olm run`) beside it.
3. `kubectl apply` memcached-operator 0.0.1's CSV: Pending, with its missing requirements named.
4. Add the CRD and RBAC: the operator installs, runs, and serves two memcached instances.
5. `kubectl apply` 0.0.2 (it replaces 0.0.1): the upgrade, with the instances untouched.

The cluster and olm-py are left running at the end, with a line saying how to look around
and how to stop everything.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.verifiedcache import BuildError
from olm.progress import Progress
from olm.waiting import attempts

NAMESPACE = "memcached-demo"
SAMPLE = manifests.MANIFESTS / "samples" / "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"


class Story:
    def __init__(self, cluster: DevCluster) -> None:
        self.cluster = cluster

    def say(self, text: str) -> None:
        print(f"\n== {text}", flush=True)

    def kubectl(self, *args: str, stdin: str | None = None, show: bool = True) -> str:
        if show:
            print(f"$ kubectl {' '.join(args)}", flush=True)
        output = self.cluster.kubectl(*args, stdin=stdin)
        if show and output.strip():
            print(output.rstrip(), flush=True)
        return output

    def json(self, *args: str) -> Any:
        return json.loads(self.cluster.kubectl("get", *args, "-o", "json"))

    def phase(self, name: str) -> str:
        try:
            return str(self.json("csv", name, "-n", NAMESPACE).get("status", {}).get("phase", ""))
        except ClusterError:
            return "gone"

    def wait(self, what: str, check: Callable[[], bool], timeout: float = 120) -> None:
        for _ in attempts(timeout, 0.5):
            if check():
                return
        raise ClusterError(f"timed out waiting for {what}; see {self.cluster.state_dir / 'logs'}")

    def operands(self) -> dict[str, str]:
        found = {}
        for kind in ("memcached", "deployment", "pod"):
            for item in self.json(kind, "-n", NAMESPACE)["items"]:
                if (
                    kind == "memcached"
                    or item["metadata"].get("labels", {}).get("app") == "memcached"
                ):
                    found[f"{kind}/{item['metadata']['name']}"] = item["metadata"]["uid"]
        return found

    def tell(self) -> None:
        self.say(f"A namespace with one OperatorGroup: {NAMESPACE}")
        self.cluster.kubectl(
            "delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=true", timeout=120
        )
        self.kubectl("create", "namespace", NAMESPACE)
        group = {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "memcached-demo"},
            "spec": {"targetNamespaces": [NAMESPACE]},
        }
        self.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=json.dumps(group))

        self.say("kubectl apply the memcached-operator 0.0.1 CSV: nothing is installed yet")
        self.kubectl("apply", "-n", NAMESPACE, "-f", str(SAMPLE / f"{OLD}.csv.yaml"))
        self.wait(
            "RequirementsNotMet",
            lambda: (
                self.json("csv", OLD, "-n", NAMESPACE).get("status", {}).get("reason")
                == "RequirementsNotMet"
            ),
        )
        self.kubectl("get", "csv", "-n", NAMESPACE)
        self.kubectl(
            "get",
            "csv",
            OLD,
            "-n",
            NAMESPACE,
            "-o",
            "jsonpath={range .status.requirementStatus[*]}{.kind} {.name}: {.status} ({.message}){'\\n'}{end}",
        )

        self.say(
            "Add the CRD and the operator's ServiceAccount and RBAC: OLM installs the operator"
        )
        self.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
        self.kubectl("apply", "-n", NAMESPACE, "-f", str(SAMPLE / "rbac.yaml"))
        self.wait(f"{OLD} Succeeded", lambda: self.phase(OLD) == "Succeeded")
        self.kubectl("get", "csv", "-n", NAMESPACE)
        self.kubectl("get", "deployments,pods", "-n", NAMESPACE)

        self.say(
            "Two memcached instances: the operator (a real process, as its ServiceAccount) makes their Deployments"
        )
        for name, size in (("cache-a", 3), ("cache-b", 2)):
            instance = {
                "apiVersion": "cache.example.com/v1alpha1",
                "kind": "Memcached",
                "metadata": {"name": name},
                "spec": {"size": size},
            }
            self.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=json.dumps(instance))
        self.wait(
            "the instances' pods",
            lambda: all(
                len(
                    (self.json("memcached", n, "-n", NAMESPACE).get("status") or {}).get("nodes")
                    or []
                )
                == s
                for n, s in (("cache-a", 3), ("cache-b", 2))
            ),
        )
        self.kubectl("get", "memcached,pods", "-n", NAMESPACE)
        before = self.operands()

        self.say(
            "kubectl apply the 0.0.2 CSV (spec.replaces: memcached-operator.v0.0.1): the upgrade"
        )
        self.kubectl("apply", "-n", NAMESPACE, "-f", str(SAMPLE / f"{NEW}.csv.yaml"))
        seen: list[str] = []
        # Prints each state the two CSVs pass through; after 120 s the demo goes on regardless
        # (the states printed show where the upgrade stopped).
        for _ in attempts(120, 0.2):
            state = f"{OLD}: {self.phase(OLD):<10}  {NEW}: {self.phase(NEW)}"
            if not seen or seen[-1] != state:
                seen.append(state)
                print(f"   {state}", flush=True)
            if self.phase(OLD) == "gone" and self.phase(NEW) == "Succeeded":
                break
        self.kubectl("get", "csv", "-n", NAMESPACE)
        self.wait(
            "0.0.2 reconciling",
            lambda: all(
                (self.json("memcached", n, "-n", NAMESPACE).get("status") or {}).get("reconciledBy")
                == "0.0.2"
                for n in ("cache-a", "cache-b")
            ),
        )
        self.kubectl("get", "memcached,pods", "-n", NAMESPACE)
        after = self.operands()
        verdict = "untouched (same UIDs)" if after == before else "CHANGED"
        print(
            f"\nThe {len(before)} memcached objects, Deployments and pods are {verdict}; the instances are now reconciled by 0.0.2."
        )


SUB_NAMESPACE = "memcached-subscribed"


def second_act(story: Story) -> None:
    """The same upgrade, driven by a Subscription to the samples catalog with Manual approval."""
    ns = SUB_NAMESPACE
    story.say(f"Act two: subscribe to memcached-operator from the samples catalog (namespace {ns})")
    story.cluster.kubectl(
        "delete", "namespace", ns, "--ignore-not-found", "--wait=true", timeout=120
    )
    story.kubectl("get", "catalogsource", "-n", "olm")
    story.kubectl("create", "namespace", ns)
    group = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": ns},
        "spec": {"targetNamespaces": [ns]},
    }
    story.kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(group), show=False)
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "memcached"},
        "spec": {
            "name": "memcached-operator",
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
            "startingCSV": OLD,
            "installPlanApproval": "Manual",
        },
    }
    story.kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(subscription))

    def plan_for(csv: str) -> str:
        for plan in story.json("installplan.operators.coreos.com", "-n", ns)["items"]:
            if (
                csv in plan["spec"]["clusterServiceVersionNames"]
                and (plan.get("status") or {}).get("phase") == "RequiresApproval"
            ):
                return str(plan["metadata"]["name"])
        return ""

    def has_plan(csv: str) -> bool:
        return bool(plan_for(csv))

    def succeeded(csv: str) -> bool:
        items = story.json("csv", "-n", ns)["items"]
        return any(
            i["metadata"]["name"] == csv and (i.get("status") or {}).get("phase") == "Succeeded"
            for i in items
        )

    for csv in (OLD, NEW):
        story.wait(f"an InstallPlan for {csv}", functools.partial(has_plan, csv))
        name = plan_for(csv)
        story.say(f"An InstallPlan for {csv} waits for approval")
        story.kubectl(
            "get", "subscription.operators.coreos.com,installplan.operators.coreos.com", "-n", ns
        )
        story.kubectl(
            "get",
            "installplan.operators.coreos.com",
            name,
            "-n",
            ns,
            "-o",
            "jsonpath={range .status.plan[*]}{.resource.kind} {.resource.name}{'\\n'}{end}",
        )
        story.kubectl(
            "patch",
            "installplan.operators.coreos.com",
            name,
            "-n",
            ns,
            "--type=merge",
            "-p",
            '{"spec":{"approved":true}}',
        )
        story.wait(f"{csv} Succeeded", functools.partial(succeeded, csv))
        story.kubectl("get", "csv", "-n", ns)
    story.wait(
        "AtLatestKnown",
        lambda: (
            (
                story.json("subscription.operators.coreos.com", "memcached", "-n", ns).get("status")
                or {}
            ).get("state")
            == "AtLatestKnown"
        ),
    )
    story.kubectl(
        "get",
        "subscription.operators.coreos.com",
        "memcached",
        "-n",
        ns,
        "-o",
        "jsonpath=state={.status.state} installedCSV={.status.installedCSV}{'\\n'}",
    )


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m olm.demo",
        description=__doc__,
        epilog="Takes a few minutes (longer on first use, when the control plane is built). "
        "Writes the local cluster's state and logs under ~/.local/state/olm-py/dev/.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args(argv)
    progress = Progress()
    try:
        cluster = DevCluster(progress=progress)
        if not cluster.is_up():
            cluster.binaries = ensure_binaries(progress=progress)
        cluster.up()
        progress.say(
            "Installing olm-py's CRDs, the olm and operators namespaces, and the global OperatorGroup"
        )
        manifests.install(cluster)
        if cluster.start_process("olm-run", [sys.executable, "-m", "olm.cli", "run"]):
            progress.say("Started the olm-py controllers (`olm run`)")
        print(
            "\n== The local cluster: real etcd, kube-apiserver, controller-manager, scheduler; kwok nodes"
        )
        Story(cluster).kubectl("get", "nodes")
        Story(cluster).tell()
        second_act(Story(cluster))
    except (BuildError, ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        "\nThe cluster and olm-py are still running. Look around with:\n"
        f'    eval "$(.venv/bin/olm dev env)"; kubectl get csv,deploy,pods,memcached -n {NAMESPACE}\n'
        f"    kubectl get subscription.operators.coreos.com,installplan.operators.coreos.com,csv -n {SUB_NAMESPACE}\n"
        "olm-py's log: ~/.local/state/olm-py/dev/logs/olm-run.log. Stop everything with:\n"
        "    .venv/bin/olm dev down"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
