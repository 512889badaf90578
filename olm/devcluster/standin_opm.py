"""A stand-in for `quay.io/operator-framework/opm` pods, run by the local pod runner.

OLM's e2e suite serves file-based catalogs from pods of the opm image (its "magic catalog":
`opm serve /opt/olm`, the catalog a ConfigMap volume mounted there, port 50051, a Service in
front, a CatalogSource of `spec.address` `<service>.<namespace>.svc:50051`). kwok only simulates
pods and the image is out of reach, so the pod runner runs the real `opm` of the local cluster's
binaries instead (olm/devcluster/build.py), with the container's arguments: a path under a
volume's mountPath becomes that volume's local directory (`OLM_PY_MOUNTS`), and the termination
log goes to this pod's own directory, never to /dev. It runs in the pod's network namespace, so
opm's `:50051` is the pod IP's port 50051 and nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from olm.devcluster.build import Binaries
from olm.devcluster.versions import cache_dir

TERMINATION_LOG_FLAGS = ("-t", "--termination-log")


def localize(args: list[str], mounts: dict[str, str]) -> list[str]:
    """`args` with every path under a mountPath moved to its local directory (pure; the
    longest mountPath wins)."""
    result = []
    for arg in args:
        for mount in sorted(mounts, key=len, reverse=True):
            if arg == mount or arg.startswith(mount.rstrip("/") + "/"):
                arg = mounts[mount] + arg[len(mount.rstrip("/")) :]
                break
        result.append(arg)
    return result


def opm_argv(opm: Path, args: list[str], mounts: dict[str, str], log: Path) -> list[str]:
    """The command line for the container's `opm <args>` (pure): its own termination-log flag,
    if any, replaced by one in the pod's directory (never a file of this machine's /dev)."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in TERMINATION_LOG_FLAGS:
            skip = True  # its value is the next argument
            continue
        if arg.split("=", 1)[0] in TERMINATION_LOG_FLAGS:
            continue
        kept.append(arg)
    argv = [str(opm), *localize(kept, mounts)]
    if argv[1:2] == ["serve"]:
        argv += ["-t", str(log)]
    return argv


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]):  # the stand-in's own help; any other argument is opm's
        parser = argparse.ArgumentParser(
            prog="python -m olm.devcluster.standin_opm",
            description=(
                "Stand in for an opm pod of the local pod runner: exec the local cluster's real"
                " opm with ARGS, paths under a volume's mountPath ($OLM_PY_MOUNTS) made local."
            ),
            epilog=(
                "Takes as long as opm runs (`opm serve` until killed). Writes what opm writes,"
                " its termination log in the pod's directory (beside $KUBECONFIG)."
            ),
        )
        parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="opm's")
        parser.parse_args(args)
    mounts: dict[str, str] = json.loads(os.environ.get("OLM_PY_MOUNTS") or "{}")
    log = Path(os.environ.get("KUBECONFIG") or ".").parent / "opm-termination.log"
    command = opm_argv(Binaries(cache_dir()).path("opm"), args, mounts, log)
    print("running " + " ".join(command), flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
