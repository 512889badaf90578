"""`olm catalog validate|render|inspect|graph`: thin commands over the catalog logic.

Exit status: 0 when the catalog is valid (or the command succeeded), 1 otherwise; problems
are printed one per line with file, location, rule and fix, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from olm.catalog.formats import load
from olm.catalog.inspect import inspect, table
from olm.catalog.picture import PictureError, rendered
from olm.catalog.render import to_json, to_yaml
from olm.catalog.validate import validate


def _validate(args: argparse.Namespace) -> int:
    catalog = load(Path(args.path))
    everything = validate(catalog, warnings=True)
    problems = [p for p in everything if p.level == "error"]
    if args.output == "json":
        print(
            json.dumps(
                {"passed": not problems, "problems": [p.__dict__ for p in problems]}, indent=2
            )
        )
    else:
        for problem in problems:
            print(problem)
        summary = f"{len(catalog.packages)} packages, {catalog.bundle_count} bundles"
        print(
            f"{args.path}: {'valid' if not problems else f'{len(problems)} problems'} ({summary})",
            file=sys.stderr,
        )
    return 0 if not problems else 1


def _render(args: argparse.Namespace) -> int:
    catalog = load(Path(args.path))
    blocking = [p for p in catalog.problems]
    for problem in blocking:
        print(problem, file=sys.stderr)
    sys.stdout.write(to_json(catalog) if args.output == "json" else to_yaml(catalog))
    return 0 if not blocking else 1


def _inspect(args: argparse.Namespace) -> int:
    catalog = load(Path(args.path))
    for problem in catalog.problems:
        print(problem, file=sys.stderr)
    if args.output == "json":
        print(json.dumps(inspect(catalog), indent=2, sort_keys=False))
    else:
        print(table(catalog))
    return 0


def _graph(args: argparse.Namespace) -> int:
    catalog = load(Path(args.path))
    package = catalog.packages.get(args.package)
    if package is None:
        print(
            f'error: no package "{args.package}" in {args.path}; packages: {", ".join(sorted(catalog.packages))}',
            file=sys.stderr,
        )
        return 1
    try:
        data = rendered(package, args.channel, args.format)
    except PictureError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.out:
        Path(args.out).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
    return 0


def _serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from olm.registry.index import RegistryIndex
    from olm.registry.server import serve

    catalog = load(Path(args.path))
    problems = validate(catalog)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print(
            "error: the catalog is invalid; fix it (see `olm catalog validate`) before serving it",
            file=sys.stderr,
        )
        return 1
    try:
        server = serve(RegistryIndex(catalog), f"{args.host}:{args.port}")
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"serving {len(catalog.packages)} packages, {catalog.bundle_count} bundles on {args.host}:{args.port}",
        file=sys.stderr,
        flush=True,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=2).wait()
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    catalog = commands.add_parser(
        "catalog", help="read, validate, render and picture operator catalogs"
    )
    sub = catalog.add_subparsers(dest="catalog_command", required=True)
    validate_cmd = sub.add_parser("validate", help="report every problem (exit 1 when invalid)")
    validate_cmd.add_argument("path")
    validate_cmd.add_argument("--output", choices=["text", "json"], default="text")
    validate_cmd.set_defaults(func=_validate)
    render_cmd = sub.add_parser("render", help="any catalog format to a file-based catalog")
    render_cmd.add_argument("path")
    render_cmd.add_argument("--output", "-o", choices=["yaml", "json"], default="yaml")
    render_cmd.set_defaults(func=_render)
    inspect_cmd = sub.add_parser("inspect", help="packages, channels, heads, bundles")
    inspect_cmd.add_argument("path")
    inspect_cmd.add_argument("--output", "-o", choices=["table", "json"], default="table")
    inspect_cmd.set_defaults(func=_inspect)
    graph_cmd = sub.add_parser("graph", help="a picture of a package's upgrade graph")
    graph_cmd.add_argument("path")
    graph_cmd.add_argument("--package", required=True)
    graph_cmd.add_argument("--channel")
    graph_cmd.add_argument("--format", choices=["mermaid", "dot", "svg", "png"], default="mermaid")
    graph_cmd.add_argument("--out", help="write to this file instead of stdout")
    graph_cmd.set_defaults(func=_graph)
    serve_cmd = sub.add_parser("serve", help="serve a catalog over operator-registry's gRPC API")
    serve_cmd.add_argument("path")
    serve_cmd.add_argument("--port", "-p", type=int, default=50051)
    serve_cmd.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    serve_cmd.set_defaults(func=_serve)
