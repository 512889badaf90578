"""`olm plan show <plan> -n NS` (added to the olm command's parser).

Exit status: 0 when the preview was printed (whatever it flags: flags are for a person, and for
tools in `-o json`), 1 when the plan cannot be read, 2 on a usage error. Never a traceback for
what a user can fix.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from olm.api.preview import PREVIEW_SUMMARY_ANNOTATION

DESCRIPTION = f"""\
Preview what approving an InstallPlan does, compared with what is installed.

For each ClusterServiceVersion the plan installs, against the one it replaces: the RBAC rules
granted and revoked (cluster-wide, wildcard and sensitive grants flagged, and whether the plan
widens what the operator may do), the Deployment changes (images, env, resources). For each
CRD: versions added and removed (a removed version still in use flagged), the storage version,
fields removed, and whether the existing objects still validate (the InstallPlan's own upgrade
safety check). Then every object created, updated and deleted.

Read-only, with your own kubeconfig. `-o json` prints the same for tools; the plan's
{PREVIEW_SUMMARY_ANNOTATION} annotation holds its flags and counts. docs/plan-preview.md says more.
"""


def _cmd_plan_show(args: argparse.Namespace) -> int:
    from olm.planshow.run import PlanShowError, gateway_for, show

    try:
        show(gateway_for(args.kubeconfig), args.plan, args.namespace, args.output)
    except PlanShowError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def add_commands(commands: Any) -> None:
    """Add `plan show` to the olm command's subparsers."""
    plan = commands.add_parser("plan", help="InstallPlans: preview what approving one does")
    plan_commands = plan.add_subparsers(dest="plan_command", required=True)
    show = plan_commands.add_parser(
        "show",
        help="what approving an InstallPlan changes: RBAC, CRDs, Deployments, objects",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("plan", help="the InstallPlan's name")
    show.add_argument("-n", "--namespace", required=True, help="the InstallPlan's namespace")
    show.add_argument(
        "-o", "--output", choices=("text", "json"), default="text", help="text (default) or json"
    )
    show.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    show.set_defaults(func=_cmd_plan_show)
