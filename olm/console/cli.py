"""`olm console`: serve the web console (docs/console.md) until interrupted.

Invariants: the server listens on loopback unless told otherwise; it never signs in with the
kubeconfig's client certificate: a static token of the kubeconfig's user becomes a one-time
sign-in link (printed, valid 5 minutes), otherwise users sign in with a token of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from olm.console.server import Console


DEFAULT_PORT = 9090


def add_commands(commands: Any) -> None:
    console = commands.add_parser(
        "console", help="serve the web console (OperatorHub, installs, approvals, operands)"
    )
    console.add_argument(
        "--kubeconfig", help="kubeconfig naming the cluster (default: $KUBECONFIG)"
    )
    console.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to serve on (default {DEFAULT_PORT})"
    )
    console.add_argument(
        "--bind-address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    console.add_argument(
        "--read-only", action="store_true", help="offer no action and refuse every change"
    )
    console.add_argument(
        "--secure-cookies",
        action="store_true",
        help="mark cookies Secure (when served behind HTTPS, as in the chart)",
    )
    console.set_defaults(func=run)


async def _serve(console: Console, host: str, port: int, link: str | None) -> None:
    from aiohttp import web

    from olm.console.server import application

    runner = web.AppRunner(application(console), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    print(f"olm console: serving on http://{shown}:{bound}/", flush=True)
    if link:
        print(f"sign in: http://{shown}:{bound}/login?code={link}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def run(args: argparse.Namespace) -> int:
    # The web stack is imported when the console runs, not by every `olm` command.
    from olm.console.server import Console
    from olm.kube.bearer import cluster_of, kubeconfig_token
    from olm.kube.client import context_namespace

    try:
        cluster = cluster_of(args.kubeconfig)
    except Exception as exc:  # no kubeconfig, no in-cluster configuration: one line
        print(f"error: cannot find a cluster: {exc}", file=sys.stderr)
        return 1
    namespace = context_namespace(args.kubeconfig) or "default"
    console = Console(
        cluster,
        read_only=args.read_only,
        secure_cookies=args.secure_cookies,
        default_namespace=namespace,
    )
    token = kubeconfig_token(args.kubeconfig)
    link = console.sessions.one_time_code(token, namespace) if token else None
    try:
        asyncio.run(_serve(console, args.bind_address, args.port, link))
    except KeyboardInterrupt:
        return 0
    return 0
