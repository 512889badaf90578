"""Watching pods and Services and minting ServiceAccount tokens, for the local pod runner."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client, watch

from olm.api import body

Listed = Callable[[list[dict[str, Any]]], None]


def _events(
    api: client.ApiClient,
    lister: Callable[..., Any],
    stop: threading.Event,
    timeout: int,
    listed: Listed | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event type, object) for every change of what `lister` lists (all namespaces), starting
    with the current objects as ADDED; `listed` is called with them once they are all out."""
    listing = lister()
    current = [api.sanitize_for_serialization(item) for item in listing.items]
    for item in current:
        yield "ADDED", item
    if listed is not None:
        listed(current)
    assert listing.metadata is not None
    version = listing.metadata.resource_version
    while not stop.is_set():
        stream = watch.Watch()
        for event in stream.stream(
            lister,
            resource_version=version,
            timeout_seconds=timeout,
            allow_watch_bookmarks=True,
        ):
            raw = api.sanitize_for_serialization(event["object"])
            version = body.meta(raw).get("resourceVersion", version)
            if event["type"] != "BOOKMARK":
                yield event["type"], raw
            if stop.is_set():
                stream.stop()
                return


class PodWatcher:
    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)

    def events(
        self, stop: threading.Event, timeout: int = 30
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(event type, pod) for every pod change, starting with the current pods as ADDED."""
        return _events(self.api, self.core.list_pod_for_all_namespaces, stop, timeout)

    def service_events(
        self, stop: threading.Event, listed: Listed, timeout: int = 30
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(event type, Service) for every Service change, as `events` does for pods."""
        lister = self.core.list_service_for_all_namespaces
        return _events(self.api, lister, stop, timeout, listed)

    def token_for(self, namespace: str, account: str, seconds: int = 86400) -> str:
        request = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
        )
        response = self.core.create_namespaced_service_account_token(account, namespace, request)
        assert response.status is not None
        return str(response.status.token)

    def volume_data(self, namespace: str, kind: str, name: str) -> dict[str, bytes] | None:
        """The keys of a Secret or ConfigMap (`kind` "secret" / "configMap") as bytes; None
        when it does not exist."""
        import base64

        try:
            if kind == "secret":
                secret = self.core.read_namespaced_secret(name, namespace)
                return {k: base64.b64decode(v) for k, v in (secret.data or {}).items()}
            config_map = self.core.read_namespaced_config_map(name, namespace)
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise
        data = {k: v.encode() for k, v in (config_map.data or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in (config_map.binary_data or {}).items()})
        return data
