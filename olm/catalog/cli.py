"""`olm catalog validate|render|inspect|graph|serve|push` and `olm bundle push`: thin commands over the catalog logic.

Exit status: 0 when the catalog is valid (or the command succeeded), 1 otherwise; problems
are printed one per line with file, location, rule and fix, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from olm.catalog.bundledir import is_bundle_dir
from olm.catalog.formats import detect, load
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


CATALOG_LABEL = "operators.operatorframework.io.index.configs.v1"
CATALOG_ROOT = "/configs"


def _push_options(args: argparse.Namespace) -> Any:
    from olm.image.pull import Options, insecure_from_env

    extra = {args.plain_http} if getattr(args, "plain_http", None) else set()
    return Options(insecure=insecure_from_env() | extra)


def _push(args: argparse.Namespace, files: dict[str, bytes], labels: dict[str, str]) -> int:
    from olm.image.build import scratch_image
    from olm.image.errors import ImageError
    from olm.image.pull import push
    from olm.image.reference import parse

    try:
        reference = parse(args.image)
        digest = push(reference, scratch_image(files, labels), _push_options(args))
    except ImageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{reference.name}@{digest}")
    print(f"pushed {reference} ({len(files)} files)", file=sys.stderr)
    return 0


def _catalog_push(args: argparse.Namespace) -> int:
    """A FROM-scratch catalog image: the FBC under /configs, labelled as opm labels it."""
    from olm.image.build import files_under

    path = Path(args.path)
    catalog = load(path)
    problems = validate(catalog)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("error: the catalog is invalid; fix it before pushing it", file=sys.stderr)
        return 1
    if path.is_dir() and detect(path) == "fbc":
        files = files_under(path, CATALOG_ROOT)
    else:  # any other format goes in rendered as a file-based catalog
        files = {f"{CATALOG_ROOT}/catalog.yaml": to_yaml(catalog).encode()}
    return _push(args, files, {CATALOG_LABEL: CATALOG_ROOT})


def _bundle_push(args: argparse.Namespace) -> int:
    """A FROM-scratch bundle image: /manifests, /metadata and the bundle annotations as labels."""
    from olm.image.build import files_under

    path = Path(args.path)
    if not is_bundle_dir(path):
        print(
            f"error: {path} is not a bundle directory: it needs manifests/ and metadata/",
            file=sys.stderr,
        )
        return 1
    catalog = load(path)
    problems = validate(catalog)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("error: the bundle is invalid; fix it before pushing it", file=sys.stderr)
        return 1
    annotations: dict[str, Any] = {}
    for candidate in sorted((path / "metadata").glob("*.y*ml")):
        document = yaml.safe_load(candidate.read_text())
        if isinstance(document, dict) and isinstance(document.get("annotations"), dict):
            annotations = document["annotations"]
            break
    labels = {str(k): str(v) for k, v in annotations.items()}
    files = {
        **files_under(path / "manifests", "manifests"),
        **files_under(path / "metadata", "metadata"),
    }
    return _push(args, files, labels)


def _add_push_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("path")
    command.add_argument("image", help="where to push, e.g. 127.0.0.1:5000/team/catalog:v1")
    command.add_argument(
        "--plain-http",
        metavar="REGISTRY",
        help="also speak plain HTTP to this registry (127.0.0.1 and $OLM_INSECURE_REGISTRIES always are)",
    )


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
    push_cmd = sub.add_parser(
        "push", help="build a FROM-scratch catalog image (/configs) and push it to a registry"
    )
    _add_push_arguments(push_cmd)
    push_cmd.set_defaults(func=_catalog_push)
    bundle = commands.add_parser("bundle", help="operator bundles as images")
    bundle_sub = bundle.add_subparsers(dest="bundle_command", required=True)
    bundle_push = bundle_sub.add_parser(
        "push", help="build a FROM-scratch bundle image (/manifests, /metadata) and push it"
    )
    _add_push_arguments(bundle_push)
    bundle_push.set_defaults(func=_bundle_push)
