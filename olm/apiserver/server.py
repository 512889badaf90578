"""The HTTPS server of olm-py's aggregated API: `packages.operators.coreos.com/v1`.

Routes (what the kube-aggregator forwards, and what it asks for discovery):
- `/apis`, `/apis/packages.operators.coreos.com`, `/apis/packages.operators.coreos.com/v1`;
- `.../packagemanifests` and `.../namespaces/{ns}/packagemanifests`: list (JSON, or the Table
  `kubectl get` asks for), `?watch=true` (newline-delimited watch events);
- `.../namespaces/{ns}/packagemanifests/{name}`: get; `.../{name}/icon`: the icon;
- `/healthz`, `/readyz`, `/livez`: unauthenticated, as the aggregator's probes expect.

Invariants: every API request is authenticated as the front proxy's user and authorized by a
SubjectAccessReview (olm.apiserver.auth) before anything is read; answers are built by the
pure olm.packages.query from a snapshot of the catalogs (`Catalogs`), a list's encoded answer
kept for the same request while that snapshot is current (olm.packages.answers); the serving
certificate
is replaced in place (`reload`), so rotation needs no restart; the server runs its own event
loop in a thread of its own, and never blocks `olm run`'s workers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from olm.api.conditions import utc_now
from olm.apiserver.auth import (
    Attributes,
    Authorizer,
    RequestHeaderConfig,
    common_name,
    proxied_user,
)
from olm.packages import query
from olm.packages.answers import Answers
from olm.packages.selectors import SelectorError, parse_labels

log = logging.getLogger("olm.apiserver")
WATCH_POLL_SECONDS = 1.0
PREFIX = f"/apis/{query.GROUP}/{query.VERSION}"


class Catalogs(Protocol):
    """What the server reads: the ready catalogs' manifests, and a number that changes
    whenever they do."""

    global_namespace: str

    def snapshot(self) -> tuple[int, Sequence[query.Visible]]: ...


def _encode(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=_encode(body), status=status, content_type="application/json")


def _error(code: int, reason: str, message: str, name: str = "") -> web.Response:
    return _json(query.status_error(code, reason, message, name), code)


def _wants_table(accept: str) -> bool:
    return any("as=Table" in part and "g=meta.k8s.io" in part for part in accept.split(","))


class PackageServer:
    """The aiohttp application and its TLS listener."""

    def __init__(
        self,
        catalogs: Catalogs,
        authorizer: Authorizer,
        auth_config: Callable[[], RequestHeaderConfig],
        host: str,
        port: int,
    ) -> None:
        self.catalogs, self.authorizer, self.auth_config = catalogs, authorizer, auth_config
        self.host, self.port = host, port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._ca_loaded = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._failure: BaseException | None = None
        self.answers = Answers()  # encoded list answers of the current snapshot

    # -- certificates --------------------------------------------------------------------

    def reload(self, cert_pem: bytes, key_pem: bytes) -> None:
        """Serve with this certificate from the next handshake on."""
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert.write_bytes(cert_pem)
            key.write_bytes(key_pem)
            key.chmod(0o600)
            self.context.load_cert_chain(cert, key)

    def trust_proxy(self, config: RequestHeaderConfig) -> None:
        """Ask clients for a certificate signed by the request-header CA."""
        if config.ca_pem and config.ca_pem != self._ca_loaded:
            self.context.load_verify_locations(cadata=config.ca_pem)
            self.context.verify_mode = ssl.CERT_OPTIONAL
            self._ca_loaded = config.ca_pem

    # -- requests ------------------------------------------------------------------------

    def _user_attributes(
        self, request: web.Request, verb: str, namespace: str, name: str = "", sub: str = ""
    ) -> web.Response | None:
        """None when the request may go on; else the 401/403 answer."""
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        user = proxied_user(self.auth_config(), common_name(peer), request.headers)
        if user is None:
            return _error(401, "Unauthorized", "Unauthorized")
        attributes = Attributes(verb, namespace, query.GROUP, query.RESOURCE, sub, name)
        allowed, why = self.authorizer.allowed(user, attributes)
        if allowed:
            return None
        scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        resource = f"{query.RESOURCE}/{sub}" if sub else query.RESOURCE
        message = (
            f"{query.RESOURCE}.{query.GROUP}{' ' + repr(name) if name else ''} is forbidden: "
            f'User "{user.name}" cannot {verb} resource "{resource}" in API group '
            f'"{query.GROUP}"{scope}'
        ) + (f": {why}" if why else "")
        return _error(403, "Forbidden", message, name)

    async def _discovery(self, request: web.Request) -> web.Response:
        path = request.path.rstrip("/")
        if path == "/apis":
            return _json(query.api_group_list())
        if path == f"/apis/{query.GROUP}":
            return _json(query.api_group())
        return _json(query.resource_list())

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _openapi(self, request: web.Request) -> web.Response:
        """The aggregator downloads every API server's OpenAPI documents, and logs an error
        every few seconds when it cannot: an empty, valid document each."""
        if request.path.startswith("/openapi/v3"):
            return _json({"paths": {}})
        return _json(
            {"swagger": "2.0", "info": {"title": "olm-py", "version": query.VERSION}, "paths": {}}
        )

    async def _collection(self, request: web.Request) -> web.StreamResponse:
        namespace = request.match_info.get("namespace", "")
        watch = request.query.get("watch", "") in ("true", "1")
        denied = self._user_attributes(request, "watch" if watch else "list", namespace)
        if denied is not None:
            return denied
        try:
            labels = parse_labels(request.query.get("labelSelector", ""))
            name = query.name_selected(request.query.get("fieldSelector", ""))
        except SelectorError as exc:
            return _error(exc.code, exc.reason, str(exc))

        def items() -> tuple[int, list[dict[str, Any]]]:
            version, catalogs = self.catalogs.snapshot()
            found = query.visible(catalogs, namespace, self.catalogs.global_namespace, labels, name)
            return version, found

        table = _wants_table(request.headers.get("Accept", ""))
        include = request.query.get("includeObject", "Metadata")
        if watch:
            return await self._watch(request, items, table, include)

        def answer() -> bytes:
            """The encoded list, kept for the same request while the catalogs are unchanged."""
            now = utc_now()
            version, catalogs = self.catalogs.snapshot()
            ages = query.catalog_ages(catalogs, now) if table else ()
            key = (namespace, labels, name, table, include, ages)
            body = self.answers.get(version, key)
            if body is None:
                found = query.visible(
                    catalogs, namespace, self.catalogs.global_namespace, labels, name
                )
                content = query.table(found, now, include) if table else query.manifest_list(found)
                body = _encode(content)
                self.answers.put(version, key, body)
            return body

        body = await asyncio.get_running_loop().run_in_executor(None, answer)
        return web.Response(body=body, content_type="application/json")

    async def _watch(
        self,
        request: web.Request,
        items: Callable[[], tuple[int, list[dict[str, Any]]]],
        table: bool,
        include: str,
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        loop = asyncio.get_running_loop()
        timeout = float(request.query.get("timeoutSeconds", "0") or 0) or 1800.0
        deadline = loop.time() + timeout
        known: dict[tuple[str, str, str], dict[str, Any]] = {}
        seen_version = None
        try:
            while loop.time() < deadline:
                version, found = await loop.run_in_executor(None, items)
                if version != seen_version:
                    seen_version = version
                    current = {_identity(item): item for item in found}
                    for event, item in _changes(known, current):
                        body = query.table([item], utc_now(), include) if table else item
                        line = json.dumps({"type": event, "object": body}, separators=(",", ":"))
                        await response.write(line.encode() + b"\n")
                    known = current
                await asyncio.sleep(WATCH_POLL_SECONDS)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return response

    async def _item(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        sub = request.match_info.get("sub", "")
        if sub and sub != query.ICON_SUBRESOURCE:
            return _error(404, "NotFound", "the server could not find the requested resource")
        denied = self._user_attributes(request, "get", namespace, name, sub)
        if denied is not None:
            return denied
        if sub and request.headers.get("If-None-Match") and request.query.get("resourceVersion"):
            return web.Response(status=304)
        _, catalogs = self.catalogs.snapshot()
        found = query.visible(catalogs, namespace, self.catalogs.global_namespace, name=name)
        if not found:
            # packageserver's icon handler answers a bare 404 (no Status body).
            return web.Response(status=404) if sub else _json(query.not_found(name), 404)
        if sub:
            icon = query.icon(
                query.visible(
                    catalogs, namespace, self.catalogs.global_namespace, name=name, keep_icons=True
                )[0]
            )
            # Etag is always sent, empty for the placeholder, as packageserver sends it.
            return web.Response(
                body=icon.data, content_type=icon.media_type or None, headers={"Etag": icon.etag}
            )
        if _wants_table(request.headers.get("Accept", "")):
            return _json(
                query.table(found[:1], utc_now(), request.query.get("includeObject", "Metadata"))
            )
        return _json(found[0])

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self._health)
        app.router.add_get("/readyz", self._health)
        app.router.add_get("/livez", self._health)
        app.router.add_get("/openapi/v2", self._openapi)
        app.router.add_get("/openapi/v3", self._openapi)
        app.router.add_get("/apis", self._discovery)
        app.router.add_get(f"/apis/{query.GROUP}", self._discovery)
        app.router.add_get(PREFIX, self._discovery)
        app.router.add_get(f"{PREFIX}/{query.RESOURCE}", self._collection)
        app.router.add_get(f"{PREFIX}/namespaces/{{namespace}}/{query.RESOURCE}", self._collection)
        app.router.add_get(
            f"{PREFIX}/namespaces/{{namespace}}/{query.RESOURCE}/{{name}}", self._item
        )
        app.router.add_get(
            f"{PREFIX}/namespaces/{{namespace}}/{query.RESOURCE}/{{name}}/{{sub}}", self._item
        )
        return app

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> PackageServer:
        """Listen (a busy port fails here, with the reason) and serve in a thread."""
        self._thread = threading.Thread(target=self._serve, daemon=True, name="packageserver")
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise self._failure
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, self.host, self.port, ssl_context=self.context)
            loop.run_until_complete(site.start())
            self._runner = runner
            sockets = getattr(site._server, "sockets", None) or []
            if sockets:
                self.port = int(sockets[0].getsockname()[1])
        except BaseException as exc:  # reported by start()
            self._failure = exc
            self._started.set()
            loop.close()
            return
        self._started.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    def stop(self) -> None:
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)


def _identity(item: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        item["metadata"].get("namespace", ""),
        item["metadata"]["name"],
        item["status"].get("catalogSource", ""),
    )


def _changes(
    known: Mapping[tuple[str, str, str], dict[str, Any]],
    current: Mapping[tuple[str, str, str], dict[str, Any]],
) -> list[tuple[str, dict[str, Any]]]:
    """Watch events turning `known` into `current`."""
    events = [("DELETED", item) for key, item in known.items() if key not in current]
    for key, item in current.items():
        if key not in known:
            events.append(("ADDED", item))
        elif known[key] != item:
            events.append(("MODIFIED", item))
    return events
