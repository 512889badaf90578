"""`olm install`, `olm uninstall` and `olm status` (added to the olm command's parser)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _gateway(args: argparse.Namespace) -> Any:
    from olm.deploy.install import gateway_for

    return gateway_for(args.kubeconfig)


def _cmd_install(args: argparse.Namespace) -> int:
    from olm.deploy.install import InstallError, install
    from olm.progress import Progress

    try:
        result = install(
            _gateway(args), image=args.image, timeout=args.timeout, progress=Progress()
        )
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"olm-py {result.olm_py_version} ({result.image}) ready in {result.seconds:.1f}s")
    return 0


def _cmd_uninstall(args: argparse.Namespace) -> int:
    from olm.deploy.install import InstallError, uninstall
    from olm.progress import Progress

    if args.force and not args.delete_crds:
        print("error: --force only applies with --delete-crds", file=sys.stderr)
        return 2
    try:
        uninstall(
            _gateway(args),
            delete_crds=args.delete_crds,
            force=args.force,
            timeout=args.timeout,
            progress=Progress(),
        )
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("olm-py is uninstalled")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from olm.deploy.install import InstallError, status

    try:
        state = status(_gateway(args))
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Kubernetes:  {state.server_version}")
    if not state.installed:
        print("olm-py:      not installed (olm install installs it)")
    else:
        print(f"olm-py:      {state.version} ({state.image})")
        print(
            f"Deployment:  {'Available' if state.deployment.ready else 'NOT available'}, "
            f"{state.deployment.message}"
        )
        print(f"Leader:      {state.leader or '-'}")
    established = sum(1 for _, ok in state.crds if ok)
    print(f"CRDs:        {established}/{len(state.crds)} established")
    for name, ok in state.crds:
        if not ok:
            print(f"  missing or not established: {name}")
    return 0 if state.healthy else 1


def add_commands(commands: Any) -> None:
    """Add install/uninstall/status to the olm command's subparsers."""
    kubeconfig = argparse.ArgumentParser(add_help=False)
    kubeconfig.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    install = commands.add_parser(
        "install",
        parents=[kubeconfig],
        help="install olm-py into the current cluster (the chart's default manifests; no Helm)",
    )
    install.add_argument(
        "--image",
        help="the olm-py image to run, e.g. the one `make release` pushed (required on the "
        "first install; later installs keep the installed one)",
    )
    install.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait until ready (default 120)"
    )
    install.set_defaults(func=_cmd_install)
    uninstall = commands.add_parser(
        "uninstall",
        parents=[kubeconfig],
        help="remove olm-py from the current cluster (keeps CRDs, namespaces and operators)",
    )
    uninstall.add_argument(
        "--delete-crds",
        action="store_true",
        help="also delete OLM's CRDs (refused while users' objects of them exist)",
    )
    uninstall.add_argument(
        "--force",
        action="store_true",
        help="with --delete-crds: delete the CRDs even with objects (deletes those objects)",
    )
    uninstall.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait (default 60)"
    )
    uninstall.set_defaults(func=_cmd_uninstall)
    commands.add_parser(
        "status", parents=[kubeconfig], help="show what of olm-py is installed in the cluster"
    ).set_defaults(func=_cmd_status)
