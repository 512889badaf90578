"""`olm explain <kind>/<name> -n NS [-o json]` (added to the olm command's parser).

Exit status: 0 when the object is healthy (one line says so), 1 when the chain ends in a
problem or in work still under way, 2 on a usage error or when the object is not found (the
message says how to list what there is). Never a traceback for what a user can fix.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from olm.explain.kinds import UsageError, accepted, parse_target

DESCRIPTION = """\
Explain why an OLM object is not working: the chain of objects from the one named to the cause,
then the command that fixes it. It reads the cluster's objects (with your kubeconfig) and
changes nothing.

Kinds: Subscription (sub), ClusterServiceVersion (csv), InstallPlan (ip), OperatorGroup (og),
CatalogSource (catsrc), with the names kubectl accepts. docs/explain.md lists what it recognises.

Exit status: 0 healthy, 1 a problem (or work still under way), 2 a usage error or no such object.
"""


def _cmd_explain(args: argparse.Namespace) -> int:
    from olm.explain.chain import explain
    from olm.explain.commands import get, resource
    from olm.explain.read import ExplainError, connect, default_namespace, read
    from olm.explain.render import lines, text_json

    try:
        kind, name = parse_target([args.target, *([args.name] if args.name else [])])
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    namespace = args.namespace or default_namespace(args.kubeconfig)
    try:
        snapshot = read(connect(args.kubeconfig), namespace)
    except ExplainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    explanation = explain(snapshot, kind, name)
    if explanation is None:
        print(
            f"error: {kind.value} {name} not found in namespace {namespace}; "
            f"list them with: {get(resource(kind), namespace)}",
            file=sys.stderr,
        )
        return 2
    if args.output == "json":
        print(text_json(explanation))
    else:
        for line in lines(explanation, namespace):
            print(line)
    return 0 if explanation.healthy else 1


def add_commands(commands: Any) -> None:
    """Add `explain` to the olm command's subparsers."""
    parser = commands.add_parser(
        "explain",
        help="why an OLM object is stuck: the chain of reasons to the cause, and the fix",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target", metavar="KIND/NAME", help=f"the object, e.g. sub/memcached ({accepted()})"
    )
    parser.add_argument("name", nargs="?", help=argparse.SUPPRESS)  # `KIND NAME`, as kubectl
    parser.add_argument(
        "-n", "--namespace", help="its namespace (default: the current context's, else default)"
    )
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text", help="text (default) or json"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig to use (default: $KUBECONFIG)")
    parser.set_defaults(func=_cmd_explain)
