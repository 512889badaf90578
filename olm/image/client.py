"""One registry, spoken to over the OCI distribution API with urllib (the only HTTP I/O here).

- Auth: anonymous first; on a 401 challenge, Basic with the configured credentials, or the
  Bearer token flow (GET the realm with service and scope, Basic-authenticated when there are
  credentials) and the request again with the token, which is kept per scope.
- HTTPS with verified certificates, except for loopback registries and the ones configured as
  insecure: HTTPS unverified when they speak TLS, plain HTTP when not (olm/image/scheme.py).
- Redirects (blob downloads from a CDN) are followed by hand, without the Authorization header.
- Timeouts on every request; connection errors, timeouts, 429 and 5xx are retried with
  exponential backoff; other answers become an ImageError of the matching kind at once.
"""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

from olm.api.backoff import exponential_backoff
from olm.image.auth import Credentials, basic_header, parse_challenge
from olm.image.cache import BlobCache, sha256_digest
from olm.image.errors import ImageError, ImageErrorKind
from olm.image.manifest import ACCEPT
from olm.image.scheme import forget, transport, unverified_context

DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 3
BACKOFF_SECONDS = 0.5
CHUNK = 1 << 20
REDIRECTS = 5


@dataclass
class Response:
    status: int
    headers: Message
    body: bytes = b""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())
_UNVERIFIED_OPENER = urllib.request.build_opener(
    _NoRedirect(), urllib.request.HTTPSHandler(context=unverified_context())
)


@dataclass
class RegistryClient:
    registry: str  # host[:port] as written in references
    api_host: str = ""
    credentials: Credentials | None = None
    insecure: frozenset[str] = frozenset()
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    sleep: Callable[[float], None] = time.sleep
    _tokens: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base(self) -> str:
        scheme = transport(self.registry, self.api_host, self.insecure).scheme
        return f"{scheme}://{self.api_host or self.registry}/v2/"

    @property
    def _opener(self) -> urllib.request.OpenerDirector:
        verify = transport(self.registry, self.api_host, self.insecure).verify
        return _OPENER if verify else _UNVERIFIED_OPENER

    # ----- requests ---------------------------------------------------------------------------

    def _send(
        self, method: str, url: str, headers: dict[str, str], data: bytes | None, stream: bool
    ) -> tuple[Response, Any]:
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            answer = self._opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            body = exc.read() if exc.fp is not None else b""
            return Response(exc.code, exc.headers, body), None
        if stream:
            return Response(answer.status, answer.headers), answer
        with answer:
            return Response(answer.status, answer.headers, answer.read()), None

    def _once(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        data: bytes | None,
        scope: str,
        stream: bool,
    ) -> tuple[Response, Any]:
        token = self._tokens.get(scope)
        sent = dict(headers)
        if token:
            sent["Authorization"] = token
        response, handle = self._send(method, url, sent, data, stream)
        if response.status == 401:
            authorization = self._authorize(response, scope)
            if authorization:
                sent["Authorization"] = authorization
                response, handle = self._send(method, url, sent, data, stream)
        redirects = 0
        while response.status in (301, 302, 303, 307, 308) and redirects < REDIRECTS:
            location = response.headers.get("Location") or ""
            url = urllib.parse.urljoin(url, location)
            same_host = urllib.parse.urlsplit(url).netloc == (self.api_host or self.registry)
            redirected = {k: v for k, v in sent.items() if same_host or k != "Authorization"}
            if response.status == 303:
                method, data = "GET", None
            response, handle = self._send(method, url, redirected, data, stream)
            redirects += 1
        return response, handle

    def request(
        self,
        method: str,
        path: str,
        *,
        scope: str,
        headers: dict[str, str] | None = None,
        data: bytes | None = None,
        ok: tuple[int, ...] = (200,),
        what: str = "",
        stream: bool = False,
    ) -> tuple[Response, Any]:
        """One API call with retries; `path` is relative to /v2/ (or an absolute URL)."""
        url = path if "://" in path else self.base + path
        attempt = 0
        while True:
            retry = True
            try:
                response, handle = self._once(method, url, headers or {}, data, scope, stream)
            except TimeoutError as exc:
                error = ImageError(
                    ImageErrorKind.TIMEOUT,
                    f"registry {self.registry} did not answer within {self.timeout:g}s",
                    repr(exc),
                )
            except (urllib.error.URLError, ConnectionError, ssl.SSLError, OSError) as exc:
                error = _connection_error(self.registry, exc, url)
                forget(self.api_host or self.registry)
            else:
                if response.status in ok:
                    return response, handle
                if handle is not None:
                    handle.close()
                error = _status_error(self.registry, response, what)
                retry = response.status == 429 or response.status >= 500
            if not retry or attempt >= self.retries:
                raise error
            self.sleep(exponential_backoff(attempt + 1, BACKOFF_SECONDS))
            attempt += 1

    def _authorize(self, response: Response, scope: str) -> str | None:
        header = response.headers.get("WWW-Authenticate") or ""
        scheme, params = parse_challenge(header)
        if scheme == "basic":
            if self.credentials is None:
                return None
            value = basic_header(self.credentials)
        elif scheme == "bearer" and params.get("realm"):
            value = "Bearer " + self._token(params, scope)
        else:
            return None
        with self._lock:
            self._tokens[scope] = value
        return value

    def _token(self, params: dict[str, str], scope: str) -> str:
        query = {"service": params.get("service", "")}
        if scope:
            query["scope"] = scope
        url = (
            params["realm"]
            + ("&" if "?" in params["realm"] else "?")
            + urllib.parse.urlencode(query)
        )
        headers = {}
        if self.credentials is not None and (
            self.credentials.username or self.credentials.password
        ):
            headers["Authorization"] = basic_header(self.credentials)
        try:
            response, _ = self._send("GET", url, headers, None, False)
        except (urllib.error.URLError, OSError) as exc:
            raise _connection_error(self.registry, exc, url) from exc
        if response.status in (401, 403):
            raise ImageError(
                ImageErrorKind.UNAUTHORIZED,
                f"registry {self.registry} refused the credentials"
                + (" (none were configured)" if self.credentials is None else "")
                + ": check the pull secret",
            )
        if response.status != 200:
            raise _status_error(self.registry, response, "a token")
        try:
            answer = json.loads(response.body)
            return str(answer.get("token") or answer["access_token"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ImageError(
                ImageErrorKind.SERVER_ERROR,
                f"the token service of registry {self.registry} answered without a token",
                repr(exc),
            ) from exc

    # ----- the distribution API ---------------------------------------------------------------

    def resolve(self, repository: str, reference: str) -> tuple[str, str]:
        """HEAD the manifest: (digest, media type). GETs it when the registry gives no digest."""
        response, _ = self.request(
            "HEAD",
            f"{repository}/manifests/{reference}",
            scope=f"repository:{repository}:pull",
            headers={"Accept": ACCEPT},
            what=f"{repository}:{reference}",
        )
        digest = response.headers.get("Docker-Content-Digest") or ""
        media = response.headers.get("Content-Type") or ""
        if digest.startswith("sha256:"):
            return digest, media
        _body, media, digest = self.manifest(repository, reference)
        return digest, media

    def manifest(self, repository: str, reference: str) -> tuple[bytes, str, str]:
        """GET a manifest: (body, media type, digest), its digest checked when pinned."""
        response, _ = self.request(
            "GET",
            f"{repository}/manifests/{reference}",
            scope=f"repository:{repository}:pull",
            headers={"Accept": ACCEPT},
            what=f"{repository}:{reference}"
            if not reference.startswith("sha256:")
            else f"{repository}@{reference}",
        )
        digest = sha256_digest(response.body)
        if reference.startswith("sha256:") and digest != reference:
            raise ImageError(
                ImageErrorKind.CORRUPT,
                f"registry {self.registry} sent a manifest for {repository}@{reference[:19]}... "
                "whose content does not match that digest",
            )
        return response.body, response.headers.get("Content-Type") or "", digest

    def blob(self, repository: str, digest: str, cache: BlobCache) -> Path:
        """A blob in the cache (downloaded and its digest checked when not there yet)."""
        cached = cache.get(digest)
        if cached is not None:
            return cached
        attempt = 0
        while True:
            try:
                return self._download(repository, digest, cache)
            except ImageError as error:
                if (
                    error.kind not in (ImageErrorKind.TIMEOUT, ImageErrorKind.UNREACHABLE)
                    or attempt >= self.retries
                ):
                    raise
            self.sleep(exponential_backoff(attempt + 1, BACKOFF_SECONDS))
            attempt += 1

    def _download(self, repository: str, digest: str, cache: BlobCache) -> Path:
        _, handle = self.request(
            "GET",
            f"{repository}/blobs/{digest}",
            scope=f"repository:{repository}:pull",
            what=f"blob {digest[:19]}... of {repository}",
            stream=True,
        )
        hasher = hashlib.sha256()
        out = cache.writer()
        try:
            with handle, out:
                while chunk := handle.read(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
        except (TimeoutError, OSError) as exc:
            Path(out.name).unlink(missing_ok=True)
            raise ImageError(
                ImageErrorKind.TIMEOUT,
                f"registry {self.registry} stopped sending blob {digest[:19]}...",
                repr(exc),
            ) from exc
        return cache.commit(Path(out.name), digest, "sha256:" + hasher.hexdigest())

    def has_blob(self, repository: str, digest: str) -> bool:
        try:
            self.request(
                "HEAD",
                f"{repository}/blobs/{digest}",
                scope=f"repository:{repository}:pull,push",
            )
        except ImageError as error:
            if error.kind is ImageErrorKind.NOT_FOUND:
                return False
            raise
        return True

    def push_blob(self, repository: str, digest: str, data: bytes) -> None:
        if self.has_blob(repository, digest):
            return
        scope = f"repository:{repository}:pull,push"
        started, _ = self.request(
            "POST",
            f"{repository}/blobs/uploads/",
            scope=scope,
            ok=(202,),
            data=b"",
            what=f"an upload to {repository}",
        )
        location = started.headers.get("Location") or ""
        url = urllib.parse.urljoin(self.base, location)
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode({"digest": digest})
        self.request(
            "PUT",
            url,
            scope=scope,
            data=data,
            headers={"Content-Type": "application/octet-stream"},
            ok=(201, 204),
            what=f"blob {digest[:19]}... to {repository}",
        )

    def push_manifest(self, repository: str, reference: str, body: bytes, media_type: str) -> str:
        self.request(
            "PUT",
            f"{repository}/manifests/{reference}",
            scope=f"repository:{repository}:pull,push",
            data=body,
            headers={"Content-Type": media_type},
            ok=(201, 204),
            what=f"{repository}:{reference}",
        )
        return sha256_digest(body)


def _connection_error(registry: str, exc: BaseException, url: str) -> ImageError:
    reason = getattr(exc, "reason", exc)
    text = repr(reason)
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return ImageError(
            ImageErrorKind.TIMEOUT, f"registry {registry} did not answer in time", text
        )
    if isinstance(reason, ssl.SSLError) or "SSL" in text or "CERTIFICATE" in text:
        cause = (
            " (it may speak plain HTTP: only 127.0.0.1 and registries configured as insecure are "
            "spoken to over HTTP)"
            if "WRONG_VERSION_NUMBER" in text or "record layer" in text
            else (
                " (its TLS certificate is not trusted or the TLS handshake failed: add its CA to "
                "the trust store, e.g. SSL_CERT_FILE, or list it in $OLM_INSECURE_REGISTRIES)"
            )
        )
        return ImageError(
            ImageErrorKind.UNREACHABLE, f"cannot connect to registry {registry}{cause}", text
        )
    if isinstance(reason, ConnectionRefusedError) or "refused" in text.lower():
        cause = ": nothing is listening there"
    elif isinstance(reason, socket.gaierror) or "Name or service not known" in text:
        cause = ": its host name does not resolve"
    else:
        cause = ""
    return ImageError(
        ImageErrorKind.UNREACHABLE,
        f"cannot connect to registry {registry}{cause}",
        f"{url}: {text}",
    )


def _error_codes(body: bytes) -> list[str]:
    try:
        errors = json.loads(body).get("errors") or []
        return [str(e.get("code")) for e in errors if isinstance(e, dict)]
    except (ValueError, AttributeError):
        return []


def _status_error(registry: str, response: Response, what: str) -> ImageError:
    status = response.status
    codes = _error_codes(response.body)
    detail = f"HTTP {status} {codes or response.body[:200]!r}"
    subject = what or "the request"
    if status == 404 or {"MANIFEST_UNKNOWN", "NAME_UNKNOWN", "BLOB_UNKNOWN"} & set(codes):
        return ImageError(ImageErrorKind.NOT_FOUND, f"registry {registry} has no {subject}", detail)
    if status in (401, 403):
        return ImageError(
            ImageErrorKind.UNAUTHORIZED,
            f"registry {registry} refused access to {subject} (HTTP {status}): check the pull "
            "secret's credentials",
            detail,
        )
    if status == 429 or status >= 500:
        return ImageError(
            ImageErrorKind.SERVER_ERROR,
            f"registry {registry} answered HTTP {status} for {subject}",
            detail,
        )
    if status == 400 and "MANIFEST_INVALID" in codes:
        return ImageError(
            ImageErrorKind.CORRUPT, f"registry {registry} rejected {subject} as invalid", detail
        )
    return ImageError(
        ImageErrorKind.SERVER_ERROR,
        f"registry {registry} answered HTTP {status} for {subject}",
        detail,
    )
