"""`olm rollback <subscription> -n NS [--to CSV]` (added to the olm command's parser).

Exit status: 0 when olm-py planned the rollback (or it is done), 1 when it refused it (the
reason is printed, the Subscription's annotations are put back) or did not answer in time, 2
on a usage error. Never a traceback for what a user can fix.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

DESCRIPTION = """\
Go back to an earlier version of an operator installed by Subscription.

By default to the CSV the installed one replaced (its spec.replaces), or to the CSV named by
--to, when a catalog of the Subscription still has its bundle. olm-py checks it is safe (no CRD
loses a version its objects are stored at) and makes one InstallPlan that waits for your
approval whatever the Subscription's installPlanApproval: read it with `olm plan show`, then
approve it. Operands (custom resources) are never touched. Afterwards the Subscription holds
on that version (its olm-py.io/version-range annotation). docs/beyond-olm.md says more.
"""


def _cmd_rollback(args: argparse.Namespace) -> int:
    from olm.rollback.run import RollbackError, gateway_for, rollback

    try:
        return rollback(
            gateway_for(args.kubeconfig),
            args.subscription,
            args.namespace,
            to=args.to or "",
            dry_run=args.dry_run,
            timeout=args.timeout,
        )
    except RollbackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def add_commands(commands: Any) -> None:
    """Add `rollback` to the olm command's subparsers."""
    parser = commands.add_parser(
        "rollback",
        help="go back to an earlier CSV of a Subscription's package (one plan to approve)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("subscription", help="the Subscription's name")
    parser.add_argument("-n", "--namespace", required=True, help="the Subscription's namespace")
    parser.add_argument(
        "--to", help="the CSV to go back to (default: the installed CSV's spec.replaces)"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    parser.add_argument(
        "--dry-run", action="store_true", help="say what it would ask; change nothing"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds to wait for olm-py's answer (default 120)",
    )
    parser.set_defaults(func=_cmd_rollback)
