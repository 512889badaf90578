"""The sample memcached operator (what OLM installs in the getting-started story).

For each Memcached it keeps one Deployment named after the instance with `spec.size`
replicas, and writes `status.nodes` (its pod names) and `status.reconciledBy` (the version
of the operator that last reconciled it). It writes the Deployment with server-side apply
under one field manager, so a newer operator version that wants the same Deployment changes
nothing: operands survive upgrades untouched.

From 0.0.3 it also serves a validating webhook (a size above its limit is refused) and a
conversion webhook between the API's v1alpha1 and v1beta1 (`webhooks.py`, `server.py`); the
port and limit come from `WEBHOOK_PORT` (9443) and `MEMCACHED_SIZE_LIMIT` (10).

A reconcile that fails (its RBAC not yet effective right after an install or upgrade, the API
server busy) is tried again after 1, 2, 4 ... s (at most 30 s apart) until it succeeds, as a
controller-runtime operator requeues: an instance whose only event came during such a window
would otherwise wait for ever. At most one retry per instance is pending at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

import kopf

from olm.api import body
from olm.api.backoff import exponential_backoff
from olm.kube.client import api_client
from olm.kube.gateway import Gateway, GatewayError, NotFound, register_resource
from olm.samples.memcached.server import DEFAULT_PORT, serve_in_background
from olm.samples.memcached.webhooks import DEFAULT_SIZE_LIMIT, serves_webhooks

GROUP, VERSION, PLURAL = "cache.example.com", "v1alpha1", "memcacheds"
FIELD_MANAGER = "memcached-operator"
APP_LABEL = "memcached_cr"

log = logging.getLogger("memcached-operator")
register_resource(f"{GROUP}/{VERSION}", "Memcached", PLURAL, namespaced=True)


def desired_deployment(memcached: dict[str, Any]) -> dict[str, Any]:
    meta = memcached["metadata"]
    labels = {"app": "memcached", APP_LABEL: meta["name"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "Memcached",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": int((memcached.get("spec") or {}).get("size", 1)),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "memcached",
                            "image": "memcached:1.4.36-alpine",
                            "command": ["memcached", "-m=64", "-o", "modern", "-v"],
                            "ports": [{"containerPort": 11211, "name": "memcached"}],
                        }
                    ]
                },
            },
        },
    }


class MemcachedReconciler:
    def __init__(self, gateway: Gateway, version: str) -> None:
        self.gateway = gateway
        self.version = version
        self.lock = threading.Lock()
        # What this process last wrote per instance: a CRD whose schema prunes a field must
        # not make us write the same status forever.
        self.written: dict[tuple[str, str], dict[str, Any]] = {}

    def reconcile(self, namespace: str, name: str) -> None:
        with self.lock:
            try:
                memcached = self.gateway.get(f"{GROUP}/{VERSION}", "Memcached", namespace, name)
            except NotFound:
                return
            if memcached["metadata"].get("deletionTimestamp"):
                return
            self.gateway.apply(desired_deployment(memcached))
            pods = self.gateway.list_names("v1", "Pod", namespace, f"{APP_LABEL}={name}")
            status = {"nodes": sorted(pods), "reconciledBy": self.version}
            if {k: (memcached.get("status") or {}).get(k) for k in status} != status:
                self.gateway.patch_status(
                    f"{GROUP}/{VERSION}", "Memcached", namespace, name, status
                )
                log.info(
                    "reconciled %s/%s as %s: %d nodes", namespace, name, self.version, len(pods)
                )


def watched_namespaces(environ: Mapping[str, str]) -> list[str]:
    """OLM's targetNamespaces (via WATCH_NAMESPACE; empty in an all-namespaces group, where the
    operator watches every namespace: []), else the operator's own namespace."""
    watch = environ.get("WATCH_NAMESPACE", environ.get("POD_NAMESPACE", ""))
    return [n for n in watch.split(",") if n]


def register(registry: kopf.OperatorRegistry, reconciler: MemcachedReconciler) -> None:
    @kopf.on.event(GROUP, VERSION, PLURAL, registry=registry)
    def memcached_changed(**kwargs: Any) -> None:
        event = kwargs["event"]
        meta = body.meta(event.get("object") or {})
        if event.get("type") != "DELETED":
            _safely(reconciler, meta["namespace"], meta["name"])

    @kopf.on.event("", "v1", "pods", labels={APP_LABEL: kopf.PRESENT}, registry=registry)
    def pod_changed(**kwargs: Any) -> None:
        event = kwargs["event"]
        meta = body.meta(event.get("object") or {})
        _safely(reconciler, meta["namespace"], meta["labels"][APP_LABEL])

    kopf.on.login(registry=registry)(kopf.login_via_client)


RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 30.0
_retries: dict[tuple[str, str], int] = {}  # instance -> failed attempts, while a retry is due
_retries_lock = threading.Lock()


def _safely(
    reconciler: MemcachedReconciler, namespace: str, name: str, retry: bool = False
) -> None:
    key = (namespace, name)
    try:
        reconciler.reconcile(namespace, name)
    except GatewayError as exc:
        with _retries_lock:
            pending = key in _retries and not retry
            attempts = _retries.get(key, 0) + (0 if pending else 1)
            _retries[key] = attempts
        if pending:  # the retry already scheduled covers this event too
            return
        delay = exponential_backoff(attempts, RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS)
        log.warning(
            "reconciling %s/%s failed: %s; trying again in %.0f s", namespace, name, exc, delay
        )
        timer = threading.Timer(delay, _safely, (reconciler, namespace, name, True))
        timer.daemon = True
        timer.start()
        return
    if retry:  # an event's success leaves a pending retry to run (and end the chain) itself
        with _retries_lock:
            _retries.pop(key, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="memcached-operator",
        description=(
            "The memcached-operator sample: keep one Deployment per Memcached of the watched"
            " namespaces (from 0.0.3 also serving its webhooks)."
        ),
        epilog="Takes until killed. Writes Deployments and Memcached status, no files.",
    )
    parser.add_argument("--version", required=True, help="the operator version this process is")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("kopf").setLevel(logging.WARNING)
    namespaces = watched_namespaces(os.environ)
    reconciler = MemcachedReconciler(
        Gateway(api_client(), field_manager=FIELD_MANAGER), args.version
    )
    registry = kopf.OperatorRegistry()
    register(registry, reconciler)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.peering.standalone = True
    # With only its namespaced RBAC, the operator may not list CRDs or namespaces: it
    # watches exactly the resources and namespaces it is given.
    settings.scanning.disabled = True
    stop = threading.Event()
    if serves_webhooks(args.version):
        serve_in_background(
            os.environ,
            int(os.environ.get("WEBHOOK_PORT") or DEFAULT_PORT),
            int(os.environ.get("MEMCACHED_SIZE_LIMIT") or DEFAULT_SIZE_LIMIT),
            stop,
        )
    log.info(
        "memcached-operator %s starting, watching %s (operator condition %s)",
        args.version,
        ",".join(namespaces) or "all namespaces",
        os.environ.get("OPERATOR_CONDITION_NAME", "-"),
    )
    try:
        asyncio.run(
            kopf.operator(
                registry=registry,
                settings=settings,
                standalone=True,
                clusterwide=not namespaces,
                namespaces=namespaces,
            )
        )
    finally:
        stop.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
