"""The `olm` command.

`olm dev build|up|down|status|env|kubeconfig` manage the local control plane; `olm dev tools`
builds the pinned tools (Helm, kubectl-operator, the real OLM); `olm dev image` and `olm dev
release` build the olm-py image and publish it with its chart. Errors a user can
fix are printed as one clear message (exit status 1), never as a traceback.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import shlex
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from olm.catalog.cli import add_commands as add_catalog_commands
from olm.configmapserver import add_command as add_configmap_server
from olm.console.cli import add_commands as add_console_commands
from olm.deploy.cli import add_commands as add_deploy_commands
from olm.devcluster import tools
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.image import IMAGE_REPOSITORY, build_image, package_version
from olm.devcluster.image_base import ImageError
from olm.devcluster.release import ReleaseError
from olm.devcluster.verifiedcache import BuildError
from olm.explain.cli import add_commands as add_explain_commands
from olm.installplan.policy import ALLOW_KIND_FLAG, InstallPolicy, parse_kinds
from olm.installplan.tenancy import ADMIN_NAMESPACES_FLAG, parse_namespaces
from olm.planshow.cli import add_commands as add_plan_commands
from olm.progress import Progress
from olm.rollback.cli import add_commands as add_rollback_commands
from olm.uninstall.cli import add_commands as add_uninstall_commands


def _cluster(args: argparse.Namespace, progress: Progress) -> DevCluster:
    state = Path(args.state_dir) if args.state_dir else None
    return DevCluster(state, progress=progress)


def _cmd_build(args: argparse.Namespace) -> int:
    binaries = ensure_binaries(progress=Progress())
    print(binaries.bin_dir)
    return 0


def _cmd_tools(args: argparse.Namespace) -> int:
    paths = tools.ensure_tools(args.names, Progress())
    for path in paths.values():
        print(path)
    hint = tools.path_hint(paths)
    if hint is not None:
        print(f"To use them: {hint}", file=sys.stderr)
    return 0


def _tool_name(value: str) -> str:
    if value not in tools.TOOLS:
        raise argparse.ArgumentTypeError(f"{value!r} is not one of {', '.join(tools.TOOLS)}")
    return value


def _cmd_up(args: argparse.Namespace) -> int:
    progress = Progress()
    cluster = _cluster(args, progress)
    if args.reference_olm:
        from olm.devcluster.reference_cluster import up_reference

        up_reference(cluster, nodes=args.nodes, api_port=args.api_port)
        print('To use it:  eval "$(olm dev env)"   then   kubectl get csv -A', file=sys.stderr)
        print("To stop it: olm dev down", file=sys.stderr)
        return 0
    if cluster.is_up():
        progress.say(f"The local cluster is already up (state in {cluster.state_dir})")
    else:
        cluster.binaries = ensure_binaries(progress=progress)
        cluster.up(nodes=args.nodes, api_port=args.api_port)
        progress.say("The local cluster is up")
    print('To use it:  eval "$(olm dev env)"   then   kubectl get nodes', file=sys.stderr)
    print("To stop it: olm dev down", file=sys.stderr)
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args, Progress())
    stopped = cluster.down()
    print(f"Stopped: {', '.join(stopped)}" if stopped else "No local cluster was running.")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster(args, Progress(quiet=True))
    rows = cluster.status()
    if not rows:
        print(f"No local cluster in {cluster.state_dir}. Start one with `olm dev up`.")
        return 1
    print(f"{'COMPONENT':<25} {'PID':>7}  {'HEALTH':<9} DETAIL")
    for row in rows:
        health = "healthy" if row.healthy else ("running" if row.running else "down")
        pid = str(row.pid) if row.pid else "-"
        detail = row.detail.splitlines()[0] if row.detail else ""
        print(f"{row.name:<25} {pid:>7}  {health:<9} {detail}")
    return 0 if all(row.healthy for row in rows) else 1


def _cmd_env(args: argparse.Namespace) -> int:
    cluster = _cluster(args, Progress(quiet=True))
    if cluster.bin_dir is None:
        print(
            f"No local cluster in {cluster.state_dir}. Start one with `olm dev up`.",
            file=sys.stderr,
        )
        return 1
    for key, value in cluster.env().items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


def _cmd_image(args: argparse.Namespace) -> int:
    print(build_image(progress=Progress(), force=args.force))
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    from olm.devcluster.release import plan_release, publish

    progress = Progress()
    release = plan_release(
        args.registry or "", args.version, plain_http=args.plain_http, insecure=args.insecure
    )
    publish(release, build=not args.no_build, progress=progress)
    progress.say(f"Released olm-py {release.version}. Install it with Helm (no values needed):")
    print(f"  {release.install_command()}", file=sys.stderr)
    print(f"or without Helm:  olm install --image {release.image}", file=sys.stderr)
    print(release.image)
    print(f"{release.chart}:{release.version}")
    return 0


def _cmd_kubeconfig(args: argparse.Namespace) -> int:
    cluster = _cluster(args, Progress(quiet=True))
    if not cluster.kubeconfig_path.is_file():
        print(
            f"No local cluster in {cluster.state_dir}. Start one with `olm dev up`.",
            file=sys.stderr,
        )
        return 1
    print(cluster.kubeconfig_path)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from olm import logs
    from olm.app import ListenError, Operations, default_lease_namespace, run
    from olm.catalogsource.trust import parse as parse_trust

    logs.setup(args.log_format, args.log_level)
    # `kill -USR1 <pid>` prints every thread's stack to stderr and carries on: how a stuck
    # worker or a wait that never ends is read on a live process (the e2e suite does it when a
    # test fails).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # A SIGTERM before the controllers run (while caches fill) stops it as cleanly as one
    # after: kopf installs its own handlers once it runs, and it stops on this same flag.
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        policy = InstallPolicy(
            extra_kinds=parse_kinds(args.allow_bundle_kind),
            admin_namespaces=parse_namespaces(args.admin_namespaces),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ops = Operations(
        leader_elect=args.leader_elect,
        lease_namespace=args.leader_election_namespace or default_lease_namespace(),
        health_port=args.health_port,
        metrics_port=args.metrics_port,
        bind_address=args.bind_address,
        package_server=not args.no_package_server,
        package_server_port=args.package_server_port,
        trusted_catalogs=parse_trust(args.trusted_catalogs),
        registry_image=args.registry_image or None,
    )
    try:
        return run(
            args.kubeconfig,
            workers=args.workers,
            resync=args.resync,
            samples=not args.no_samples,
            ops=ops,
            policy=policy,
            stop=stop,
        )
    except ListenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _trusted_catalogs(value: str) -> str:
    """A --trusted-catalogs value, checked at once (argparse says what is wrong with it)."""
    from olm.catalogsource.trust import TrustSpecError, parse

    try:
        parse([value])
    except TrustSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="olm", description="olm-py: OLM v0 in Python")
    parser.add_argument("--version", action="version", version=f"olm-py {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="run the controllers in the foreground (stop with SIGTERM)"
    )
    run.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    run.add_argument("--workers", type=int, default=4, help="reconcile workers (default 4)")
    run.add_argument(
        "--resync", type=float, default=300.0, help="seconds between full resyncs (default 300)"
    )
    run.add_argument(
        "--no-samples",
        action="store_true",
        help="do not serve the samples catalog as CatalogSource olm/samples",
    )
    run.add_argument(
        "--trusted-catalogs",
        action="append",
        default=[],
        type=_trusted_catalogs,
        metavar="NS[=KINDS],...",
        help="use only the CatalogSources of these namespaces, of these kinds (image, address, "
        "configmap, joined with '+'; none: all; NS * is every namespace); repeatable; default: "
        "every CatalogSource, as OLM (docs/catalog-trust.md)",
    )
    run.add_argument(
        "--registry-image",
        default=os.environ.get("OLM_REGISTRY_IMAGE", ""),
        metavar="IMAGE",
        help="run OLM's registry pod for each ConfigMap catalog with this olm-py image "
        "(`olm configmap-server`), its Service selecting the pod; default $OLM_REGISTRY_IMAGE, "
        "or none: such catalogs are served in-process only (docs/catalogs.md)",
    )
    run.add_argument(
        "--leader-elect",
        action="store_true",
        help="only the holder of Lease olm-py reconciles (for several replicas)",
    )
    run.add_argument(
        "--leader-election-namespace",
        metavar="NS",
        help="namespace of the Lease (default: $POD_NAMESPACE, else olm)",
    )
    run.add_argument(
        "--health-port",
        type=int,
        default=0,
        metavar="N",
        help="serve /healthz and /readyz on this port (default 0: off)",
    )
    run.add_argument(
        "--metrics-port",
        type=int,
        default=0,
        metavar="N",
        help="serve Prometheus /metrics on this port (default 0: off)",
    )
    run.add_argument(
        "--bind-address",
        default="0.0.0.0",
        help="address the health and metrics ports listen on (default 0.0.0.0)",
    )
    run.add_argument(
        "--no-package-server",
        action="store_true",
        help="do not serve the PackageManifest API (packages.operators.coreos.com/v1)",
    )
    run.add_argument(
        "--package-server-port",
        type=int,
        default=0,
        metavar="N",
        help="port of the PackageManifest API (default: 5443 in a pod, a free loopback port "
        "outside one)",
    )
    run.add_argument(
        ALLOW_KIND_FLAG,
        action="append",
        default=[],
        metavar="KIND[,KIND]",
        help="let bundles install objects of this kind too (repeatable). By default only the "
        "kinds OLM installs: a bundle with another kind fails its InstallPlan, nothing applied",
    )
    run.add_argument(
        ADMIN_NAMESPACES_FLAG,
        action="append",
        default=[],
        metavar="NS[,NS]",
        help="turn on the tenancy check (docs/tenancy.md; repeatable): InstallPlans in other "
        "namespaces may not ask for cluster-wide, wildcard or escalate/bind/impersonate RBAC. "
        "Off by default, as in OLM",
    )
    run.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="log lines as text or JSON"
    )
    run.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        type=str.lower,
        help="lowest level logged (default info)",
    )
    run.set_defaults(func=_cmd_run)
    add_catalog_commands(commands)
    add_configmap_server(commands)
    add_deploy_commands(commands)
    add_uninstall_commands(commands)
    add_rollback_commands(commands)
    add_plan_commands(commands)
    add_explain_commands(commands)
    add_console_commands(commands)
    dev = commands.add_parser("dev", help="the local Kubernetes control plane")
    dev.add_argument(
        "--state-dir", help="where the cluster keeps its state (default: ~/.local/state/olm-py/dev)"
    )
    dev_commands = dev.add_subparsers(dest="dev_command", required=True)
    dev_commands.add_parser(
        "build", help="build (or reuse) the control-plane binaries"
    ).set_defaults(func=_cmd_build)
    tools_parser = dev_commands.add_parser(
        "tools",
        help="build (or verify and reuse) the pinned tools: Helm, kubectl-operator, the real OLM",
        description="Build the pinned tools from the Go module proxy into ~/.cache/olm-py/tools "
        "(minutes each when cold; reused in seconds once built) and print their paths: "
        f"{', '.join(tools.TOOLS)}. What `make tools` runs.",
    )
    tools_parser.add_argument(
        "names", nargs="*", type=_tool_name, metavar="NAME", help="only these tools"
    )
    tools_parser.set_defaults(func=_cmd_tools)
    up = dev_commands.add_parser("up", help="start the local cluster (idempotent)")
    up.add_argument("--nodes", type=int, default=2, help="number of kwok fake nodes (default 2)")
    up.add_argument("--api-port", type=int, help="kube-apiserver port (default: a free port)")
    up.add_argument(
        "--reference-olm",
        action="store_true",
        help="run the real OLM v0.38.0 on the cluster instead of nothing (docs/parity.md)",
    )
    up.set_defaults(func=_cmd_up)
    dev_commands.add_parser(
        "down", help="stop the local cluster and remove its state"
    ).set_defaults(func=_cmd_down)
    dev_commands.add_parser("status", help="show each component's health").set_defaults(
        func=_cmd_status
    )
    dev_commands.add_parser("env", help="print export lines for KUBECONFIG and PATH").set_defaults(
        func=_cmd_env
    )
    dev_commands.add_parser("kubeconfig", help="print the kubeconfig path").set_defaults(
        func=_cmd_kubeconfig
    )
    image = dev_commands.add_parser(
        "image", help="build the container image localhost/olm-py:dev offline (podman)"
    )
    image.add_argument(
        "--force", action="store_true", help="rebuild even if the image is up to date"
    )
    image.set_defaults(func=_cmd_image)
    release = dev_commands.add_parser(
        "release",
        help="push the olm-py image and its chart to a registry (what `make release` runs)",
        description="Build (or reuse) localhost/olm-py:dev, push it as <registry>/olm-py:<version>, "
        "and push the chart, whose values name that image, to oci://<registry>/charts/olm-py.",
    )
    release.add_argument(
        "--registry", help="host[:port][/path] to push to, e.g. quay.io/<org> or 127.0.0.1:5000"
    )
    release.add_argument(
        "--version",
        help="the image tag and chart version, SemVer (default: olm-py's version, "
        f"{package_version()})",
    )
    release.add_argument(
        "--plain-http",
        action="store_true",
        help="speak plain HTTP to the registry (the default for 127.0.0.1 and localhost)",
    )
    release.add_argument(
        "--insecure", action="store_true", help="use TLS but skip verifying the certificate"
    )
    release.add_argument(
        "--no-build",
        action="store_true",
        help=f"push {IMAGE_REPOSITORY}:dev as podman holds it (made by `make image`), unchecked",
    )
    release.set_defaults(func=_cmd_release)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Behave like other CLI tools when piped into `head`: stop quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (BuildError, ClusterError, ImageError, ReleaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
