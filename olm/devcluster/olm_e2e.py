"""OLM's own end-to-end suite (operator-lifecycle-manager v0.38.0, package `test/e2e`, Ginkgo),
built from the Go module proxy and run against olm-py (docs/olm-e2e.md).

- `build`: `olm-e2e.test`, compiled in a throw-away wrapper module (`go get` of the pinned OLM
  module, then `go test -c -tags json1`), and the suite's `testdata` copied beside it, into
  `~/.cache/olm-py/tools/olm-e2e-v0.38.0/`. Cached like the other tools (a verified cache,
  olm/devcluster/verifiedcache.py: a manifest written last, the binary's size and SHA-256
  checked; reused without Go).
- `run`: a fresh local cluster of its own (`olm dev up` in a state directory of the run),
  olm-py's CRDs, namespaces and global OperatorGroup, `olm run`, and the catalog the suite's
  BeforeSuite waits for (CatalogSource `operatorhubio-catalog` in `olm`: the samples catalog
  image that `olm dev up` publishes, synced as OLM reports it: a registryService and a READY
  connection, docs/catalogs.md); then the suite with the flags OLM's Makefile gives it
  (`-namespace operators -olmNamespace olm -catalogNamespace olm`), a Ginkgo focus/skip, a time
  budget for the whole run, and a JUnit report, which is summed up at the end.

The suite's code is never changed: everything goes through its flags and the cluster it meets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.devcluster.gotoolchain import GoRun
from olm.devcluster.ports import LOOPBACK
from olm.devcluster.reference_build import OLM_MODULE, OLM_VERSION
from olm.devcluster.tools import ensure_tool
from olm.devcluster.verifiedcache import BuildError
from olm.devcluster.versions import cache_root
from olm.image.pull import EVERY_REGISTRY, MIRRORS_ENV
from olm.progress import QUIET, Progress
from olm.waiting import attempts

SUITE = "olm-e2e.test"
SUITE_PACKAGE = f"{OLM_MODULE}/test/e2e"
BUILD_TAGS = "json1"
WRAPPER_GO = "1.24.6"
TESTDATA = "testdata"
OLM_NAMESPACE = "olm"
OPERATORS_NAMESPACE = "operators"
DEFAULT_CATALOG = "operatorhubio-catalog"
RUN_BUDGET = "90m"
# Specs never run here, and why (docs/olm-e2e.md): a Ginkgo skip regex each.
NEVER_RUN: dict[str, str] = {
    # Its "broken global catalog" is spec.address 1.1.1.1:1337: the OLM under test would dial
    # an address outside this machine, which the project's tests never do.
    "Global Catalog Exclusion": "dials 1.1.1.1:1337, an address outside this machine",
}
# Specs a full run skips, and why: when olm-py fails them they wait for ever (a channel with no
# timeout), holding their shard until the budget ends. A FOCUS runs them.
# (None now: "orphaned API service clean up" was one until olm-py collected such APIServices.)
HANGS: dict[str, str] = {}
# The olm-py image the registry pods of ConfigMap catalogs name (the pod runner runs any image
# of the olm-py repository as this venv's `olm`; nothing is pulled).
REGISTRY_IMAGE = "localhost/olm-py:dev"
MIRROR_PREFIX = "mirror"  # where the local registry holds images of remote registries
# The suite's spec files, in five shards of about 40 specs each that run at once, each against a
# cluster of its own (the specs mostly wait; the whole suite in one process takes hours here).
SHARDS: tuple[tuple[str, ...], ...] = (
    ("subscription", "bundle", "deprecated", "catalog_exclusion"),
    ("csv", "gc", "fail_forward"),
    ("installplan", "user_defined_sa", "operator_condition", "scoped_client", "resource_manager"),
    ("catalog", "packagemanifest", "crd", "magic_catalog", "dynamic_resource", "catsrc_pod_config"),
    ("webhook", "operator_groups", "metrics", "disabling_copied_csv", "operator"),
)


def suite_dir(version: str = OLM_VERSION) -> Path:
    return cache_root() / "tools" / f"olm-e2e-{version}"


def suite_inputs(version: str = OLM_VERSION) -> dict[str, str]:
    return {"module": OLM_MODULE, "version": version, "package": SUITE_PACKAGE, "tags": BUILD_TAGS}


def go_args(out: Path, version: str = OLM_VERSION) -> tuple[list[str], list[str], list[str]]:
    """`go get` of the module, `go mod download -json` (where its testdata is), `go test -c`."""
    return (
        ["get", f"{OLM_MODULE}@{version}"],
        ["mod", "download", "-json", f"{OLM_MODULE}@{version}"],
        ["test", "-c", "-trimpath", "-tags", BUILD_TAGS, "-o", str(out / SUITE), SUITE_PACKAGE],
    )


def ensure_suite(progress: Progress = QUIET) -> Path:
    """The cached `olm-e2e.test` (its `testdata` beside it), building it first if needed."""
    root = suite_dir()

    def build(go: GoRun, out: Path) -> None:
        work = root / "src"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        (work / "go.mod").write_text(f"module local/olme2e\n\ngo {WRAPPER_GO}\n")
        get, download, compile_ = go_args(out)
        go.run(get, work, f"Resolving OLM {OLM_VERSION} in a wrapper module")
        module = Path(str(json.loads(go.run(download, work, "Locating OLM's module"))["Dir"]))
        source = module / "test" / "e2e" / TESTDATA
        if not source.is_dir():
            raise BuildError(f"OLM {OLM_VERSION} has no {source}; the suite needs it.")
        shutil.rmtree(root / TESTDATA, ignore_errors=True)
        shutil.copytree(source, root / TESTDATA)
        for path in (root / TESTDATA).rglob("*"):  # the module cache's copies are read-only
            path.chmod(0o755 if path.is_dir() else 0o644)
        go.run(
            compile_,
            work,
            f"Building OLM {OLM_VERSION}'s e2e suite into {root}",
            " (about 5 minutes cold on 2 cores; later runs reuse it)",
        )

    return ensure_tool(
        SUITE,
        OLM_VERSION,
        root,
        suite_inputs(),
        build,
        progress,
        goflags="-mod=mod -buildvcs=false",
        retry="run `make olm-e2e-suite`",
    )


def suite_argv(
    binary: Path,
    kubeconfig: Path,
    report: Path,
    *,
    focus: str = "",
    skip: str = "",
    budget: str = RUN_BUDGET,
    files: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> list[str]:
    """The suite's command line, as OLM's Makefile runs it, for a cluster with olm-py."""
    argv = [
        str(binary),
        f"-kubeconfig={kubeconfig}",
        f"-namespace={OPERATORS_NAMESPACE}",
        f"-olmNamespace={OLM_NAMESPACE}",
        f"-catalogNamespace={OLM_NAMESPACE}",
        f"-test-data-dir={binary.parent / TESTDATA}",
        f"-ginkgo.timeout={budget}",
        f"-ginkgo.junit-report={report}",
        "-ginkgo.v",
    ]
    if focus:
        argv.append(f"-ginkgo.focus={focus}")
    skips = [*NEVER_RUN, *([] if focus else HANGS), *([skip] if skip else [])]
    argv.append(f"-ginkgo.skip={'|'.join(f'(?:{s})' for s in skips)}")
    argv += [f"-ginkgo.focus-file=/{name}(_e2e)?_test\\.go$" for name in files]
    return [*argv, *extra]


# OLM's chart creates the OLMConfig `cluster` (its copied-CSV specs read and change it).
OLM_CONFIG = {
    "apiVersion": "operators.coreos.com/v1",
    "kind": "OLMConfig",
    "metadata": {"name": "cluster"},
}
OLM_DEPLOYMENT = "olm-operator"  # the suite reads OLM's flags from this Deployment's container


def olm_deployment_record(args: Sequence[str]) -> dict[str, object]:
    """A Deployment `olm/olm-operator` of no replicas that records how the OLM under test runs
    here (a process of this machine, not a pod): the suite reads OLM's command-line flags
    from it (`--protectedCopiedCSVNamespaces`, in the copied-CSV specs). Nothing runs from it."""
    labels = {"app": OLM_DEPLOYMENT}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": OLM_DEPLOYMENT, "namespace": OLM_NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": OLM_DEPLOYMENT, "image": "olm-py.local/record", "args": list(args)}
                    ]
                },
            },
        },
    }


def default_catalog_at(address: str) -> dict[str, object]:
    """The default catalog served at a gRPC `address` (the reference OLM's run)."""
    catalog = default_catalog("")
    spec = catalog["spec"]
    assert isinstance(spec, dict)
    spec.pop("image")
    spec["address"] = address
    return catalog


def default_catalog(image: str) -> dict[str, object]:
    """The catalog the suite's BeforeSuite waits for, as OLM's chart makes it (an image)."""
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": DEFAULT_CATALOG, "namespace": OLM_NAMESPACE},
        "spec": {
            "sourceType": "grpc",
            "image": image,
            "displayName": "Community Operators (olm-py samples)",
            "publisher": "olm-py",
        },
    }


@dataclass(frozen=True)
class Outcome:
    name: str
    state: str  # one of STATES
    seconds: float
    message: str = ""

    STATES = ("passed", "failed", "skipped", "pending")


def read_junit(text: str) -> list[Outcome]:
    """Every spec of a Ginkgo JUnit report (the suite's BeforeSuite/AfterSuite included)."""
    outcomes = []
    for case in ElementTree.fromstring(text).iter("testcase"):
        state, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                state, message = "failed", (child.get("message") or child.text or "").strip()
            elif child.tag == "skipped":
                found = child.get("message") or ""
                state = "pending" if "pending" in found.lower() else "skipped"
        outcomes.append(
            Outcome(str(case.get("name", "")), state, float(case.get("time") or 0), message)
        )
    return outcomes


def specs(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """The specs (`[It] ...`), not the suite's setup nodes ([BeforeSuite], [AfterSuite], ...)."""
    return [o for o in outcomes if o.name.startswith("[It]")]


def summary(outcomes: Sequence[Outcome], who: str = "olm-py") -> str:
    found = specs(outcomes)
    counts = {s: sum(1 for o in found if o.state == s) for s in Outcome.STATES}
    ran = counts["passed"] + counts["failed"]
    return (
        f"{who} passes {counts['passed']} of {ran} specs run "
        f"({counts['skipped']} skipped or not selected, {counts['pending']} pending)"
    )


def _start_olm_py(
    cluster: DevCluster, out: Path, progress: Progress
) -> tuple[dict[str, object], list[str]]:
    """olm-py on `cluster` (its CRDs, namespaces, `olm run`); the default catalog to apply and
    the arguments it runs with."""
    from olm.devcluster import manifests, registry, service_hosts

    cluster.up()
    manifests.install(cluster)
    # Address catalogs of the suite name a Service (`<svc>.<ns>.svc:50051`); `olm run` runs on
    # this machine, so it gets the Services' names as the reference OLM does (service_hosts).
    hosts = cluster.state_dir / "service-hosts"
    service_hosts.keep_named(cluster.start_process, cluster.kubeconfig_path, hosts)
    env = {**os.environ, **cluster.env(), "GRPC_DNS_RESOLVER": "native"}
    # Images of remote registries (quay.io/olmtest/..., the specs' catalogs and bundles) are
    # looked for in the local registry under mirror/<registry>/..., never on the network.
    env[MIRRORS_ENV] = f"{EVERY_REGISTRY}={env[registry.REGISTRY_ENV]}/{MIRROR_PREFIX}"
    # ConfigMap catalogs get OLM's registry pod, run with olm-py's image: the cluster's pod
    # runner runs it as this venv's `olm configmap-server` (docs/catalogs.md, "Registry pods").
    argv = [sys.executable, "-m", "olm.cli", "run", f"--registry-image={REGISTRY_IMAGE}"]
    cluster.start_process("olm-run", service_hosts.with_service_hosts(hosts, argv), env=env)
    image = env.get(registry.SAMPLES_IMAGE_ENV)
    if not image:
        raise BuildError("the local cluster published no samples image (olm dev status)")
    return default_catalog(image), argv[3:]


def _start_reference(
    cluster: DevCluster, out: Path, progress: Progress
) -> tuple[dict[str, object], list[str]]:
    """The real OLM on `cluster` (`olm dev up --reference-olm`); the default catalog to apply:
    the same samples catalog, served by `opm serve` (OLM would run the image in a pod, which
    kwok only simulates)."""
    from olm.devcluster.reference import olm_operator_argv
    from olm.devcluster.reference_build import ensure_reference_olm
    from olm.devcluster.reference_cluster import up_reference

    up_reference(cluster)
    port = (cluster.reference_olm() or {}).get("samples_port")
    return default_catalog_at(f"{LOOPBACK}:{port}"), olm_operator_argv(ensure_reference_olm())[1:]


def _await_synced(cluster: DevCluster, progress: Progress) -> None:
    progress.say(f"Waiting for {DEFAULT_CATALOG} to be synced (registryService, READY)")
    status: dict[str, object] = {}
    for _ in attempts(240, 1.0):
        found = json.loads(
            cluster.kubectl("get", "catsrc", DEFAULT_CATALOG, "-n", OLM_NAMESPACE, "-o", "json")
        )
        status = found.get("status") or {}
        connection = status.get("connectionState") or {}
        ready = isinstance(connection, dict) and connection.get("lastObservedState") == "READY"
        if ready and status.get("registryService"):
            return
    raise BuildError(f"{DEFAULT_CATALOG} was not synced: {status}")


def _run(args: argparse.Namespace, progress: Progress) -> int:
    binary = ensure_suite(progress)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="olm-e2e-cluster-"))
    cluster = DevCluster(state, binaries=ensure_binaries(progress=progress), progress=progress)
    start = _start_reference if args.reference else _start_olm_py
    try:
        catalog, olm_args = start(cluster, out, progress)
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(olm_deployment_record(olm_args)))
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(OLM_CONFIG))
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(catalog))
        _await_synced(cluster, progress)
        report = out / "junit.xml"
        argv = suite_argv(
            binary,
            cluster.kubeconfig_path,
            report,
            focus=args.focus,
            skip=args.skip,
            budget=args.budget,
            files=SHARDS[args.shard - 1] if args.shard else (),
        )
        progress.say("Running: " + " ".join(argv))
        env = {**os.environ, **cluster.env()}
        with (out / "suite.log").open("wb") as log:
            subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=binary.parent)
        if not report.is_file():
            progress.say(f"error: the suite wrote no report; see {out / 'suite.log'}")
            return 1
        outcomes = read_junit(report.read_text())
        (out / "outcomes.json").write_text(
            json.dumps([o.__dict__ for o in outcomes], indent=2) + "\n"
        )
        for outcome in outcomes:
            if outcome.state in ("passed", "failed"):
                print(f"{outcome.state:7} {outcome.seconds:7.1f}s  {outcome.name}")
        print(summary(outcomes, "the reference OLM" if args.reference else "olm-py"))
        return 0
    finally:
        logs = state / "logs"
        if logs.is_dir():  # olm run's (or the real OLM's) logs, beside the suite's
            shutil.copytree(logs, out / "logs", dirs_exist_ok=True)
        if not args.keep:
            cluster.down()
            shutil.rmtree(state, ignore_errors=True)


def _run_shards(args: argparse.Namespace, progress: Progress) -> int:
    """Every shard at once, each `run --shard K` in a process (and on a cluster) of its own;
    their reports merged into one."""
    ensure_suite(progress)  # built once, before the shards race for it
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    children = []
    for number in range(1, len(SHARDS) + 1):
        argv = [sys.executable, "-m", "olm.devcluster.olm_e2e", "run", f"--shard={number}"]
        argv += [
            f"--skip={args.skip}",
            f"--budget={args.budget}",
            f"--out={out / f'shard-{number}'}",
        ]
        argv += ["--reference"] if args.reference else []
        argv += ["--keep"] if args.keep else []
        log = (out / f"shard-{number}.log").open("wb")
        progress.say(f"Shard {number} ({', '.join(SHARDS[number - 1])}): {log.name}")
        children.append((subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT), log))
    try:
        for child, log in children:
            child.wait()
            log.close()
    finally:
        for child, _ in children:
            if child.poll() is None:
                child.terminate()
                child.wait()
    outcomes = []
    for number in range(1, len(SHARDS) + 1):
        report = out / f"shard-{number}" / "junit.xml"
        if report.is_file():
            outcomes += read_junit(report.read_text())
        else:
            progress.say(f"error: shard {number} wrote no report; see {out}/shard-{number}.log")
    (out / "outcomes.json").write_text(json.dumps([o.__dict__ for o in outcomes], indent=2) + "\n")
    print(summary(outcomes, "the reference OLM" if args.reference else "olm-py"))
    return 0 if all(c.returncode == 0 for c, _ in children) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m olm.devcluster.olm_e2e",
        description=(
            "OLM v0.38's own e2e suite (Ginkgo): `build` builds or reuses olm-e2e.test, `run`"
            " runs it against olm-py (or --reference, the real OLM) on fresh local clusters."
        ),
        epilog=(
            "Takes minutes to build cold; a run takes up to its --budget. Writes the suite's"
            " cache under <cache root>/tools/, a run's reports and logs in --out, and each"
            " cluster's state in a temporary directory (removed unless --keep)."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build or reuse olm-e2e.test")
    run = sub.add_parser("run", help="run the suite against olm-py on a fresh local cluster")
    run.add_argument("--focus", default="", help="a Ginkgo focus regex (default: every spec)")
    run.add_argument("--skip", default="", help="a Ginkgo skip regex")
    run.add_argument("--budget", default=RUN_BUDGET, help="time budget of the whole run")
    run.add_argument("--out", default="olm-e2e-results", help="where reports and logs go")
    run.add_argument("--keep", action="store_true", help="leave the cluster up afterwards")
    run.add_argument(
        "--shard",
        type=int,
        default=0,
        choices=range(1, len(SHARDS) + 1),
        help="run one shard of the suite's spec files (default: all shards at once)",
    )
    run.add_argument(
        "--serial", action="store_true", help="every spec in one process, on one cluster"
    )
    run.add_argument(
        "--reference",
        action="store_true",
        help="run the suite against the real OLM v0.38.0 instead (`olm dev up --reference-olm`)",
    )
    args = parser.parse_args(argv)
    progress = Progress()
    # `kill` (and a shard's parent ending) must still take the cluster down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        if args.command == "build":
            print(ensure_suite(progress))
            return 0
        if args.shard == 0 and not (args.focus or args.serial or args.reference):
            return _run_shards(args, progress)
        return _run(args, progress)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
