"""`olm uninstall-operator <package> -n NS` (added to the olm command's parser).

Exit status: 0 when the run did what it could (a CRD kept because something still uses it is
not an error: the output says what and the next command), 1 on a refused or failed request or
when `--wait` ran out of time, 2 on a usage error. Never a traceback for what a user can fix.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from olm.api.cleanup import CLEANUP_ANNOTATION, CleanupPolicy

DESCRIPTION = f"""\
Remove an operator installed by Subscription from a namespace, and say what stays.

Deleted by this command (with your own kubeconfig's rights): the package's Subscription, its
ClusterServiceVersions and the InstallPlans that install only them. The garbage collector then
removes what they own (OperatorCondition, Deployments, ServiceAccounts, Roles, RoleBindings);
olm-py removes the CSV's copies in other namespaces and its ClusterRoles and ClusterRoleBindings.

CRDs: with the Subscription annotation {CLEANUP_ANNOTATION}=keep (the default) they stay, as in
OLM v0. With {CLEANUP_ANNOTATION}=crds-when-unused (or --crds-when-unused) each CRD the package's
CSVs own is deleted only when no custom resource of it remains in any namespace and no other
installed CSV owns or requires it; otherwise it stays, the output names what blocks it, and
running the same command again (or --pending) deletes it once nothing does. Custom resources
(operands) are never deleted. docs/uninstall.md says more.
"""


def _cmd_uninstall_operator(args: argparse.Namespace) -> int:
    from olm.uninstall.run import UninstallError, gateway_for, uninstall

    if bool(args.package) == bool(args.pending):
        print("error: name a package (with -n NAMESPACE), or pass --pending", file=sys.stderr)
        return 2
    if args.package and not args.namespace:
        print("error: -n NAMESPACE is required with a package", file=sys.stderr)
        return 2
    flag = CleanupPolicy.CRDS_WHEN_UNUSED if args.crds_when_unused else None
    if args.pending:
        flag = CleanupPolicy.CRDS_WHEN_UNUSED  # the CRDs' own annotation asked for it
    try:
        return uninstall(
            gateway_for(args.kubeconfig),
            args.package or "",
            args.namespace or "",
            flag=flag,
            dry_run=args.dry_run,
            wait=args.wait,
            timeout=args.timeout,
        )
    except UninstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def add_commands(commands: Any) -> None:
    """Add `uninstall-operator` to the olm command's subparsers."""
    parser = commands.add_parser(
        "uninstall-operator",
        help="remove an operator (Subscription, CSV, InstallPlans) from a namespace and say "
        "what stays; CRDs only when unused and asked for",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("package", nargs="?", help="the package (the Subscription's spec.name)")
    parser.add_argument("-n", "--namespace", help="the namespace of its Subscription")
    parser.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    parser.add_argument(
        "--crds-when-unused",
        action="store_true",
        help=f"delete the package's unused CRDs whatever the Subscription's {CLEANUP_ANNOTATION} says",
    )
    parser.add_argument(
        "--pending",
        action="store_true",
        help=f"no package: delete every CRD annotated {CLEANUP_ANNOTATION}=crds-when-unused "
        "that nothing uses any more",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be done; change nothing"
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="if a CRD is still in use, wait (saying what blocks it) and delete it once unused",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds --wait waits at most (default 600); then exit 1",
    )
    parser.set_defaults(func=_cmd_uninstall_operator)
