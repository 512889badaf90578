"""Image references (`[registry/]repository[:tag][@digest]`), as distribution/reference parses
them: a first path component with a `.` or `:` (or `localhost`) is the registry; otherwise the
image is on Docker Hub (`docker.io`, one-component names under `library/`). No tag and no digest
means `:latest`.

Invariant: pure; `parse(str(ref)) == ref`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from olm.image.errors import ImageError, ImageErrorKind

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
DEFAULT_TAG = "latest"

_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}")
_SHA256 = re.compile(r"sha256:[a-f0-9]{64}")
_HOST = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
)


@dataclass(frozen=True)
class Reference:
    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        """The host the distribution API is served from (Docker Hub's differs from its name)."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def reference(self) -> str:
        """What goes after /manifests/: the digest when there is one, else the tag."""
        return self.digest or self.tag or DEFAULT_TAG

    def with_digest(self, digest: str) -> Reference:
        return replace(self, digest=digest)

    def with_tag(self, tag: str) -> Reference:
        return replace(self, tag=tag, digest=None)

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def _invalid(text: str, why: str) -> ImageError:
    return ImageError(
        ImageErrorKind.INVALID_REFERENCE,
        f"{text!r} is not a valid image reference ({why}); write it like "
        "registry.example.com/team/catalog:v1 or ...@sha256:<64 hex digits>",
    )


def parse(text: str) -> Reference:
    """Parse an image reference; raise ImageError(INVALID_REFERENCE) with the reason."""
    raw = text.strip()
    if not raw:
        raise _invalid(text, "it is empty")
    if "://" in raw:
        raise _invalid(text, "it has a URL scheme; leave out http:// or https://")
    rest, digest = raw, None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
        if not _DIGEST.fullmatch(digest):
            raise _invalid(text, f"digest {digest!r} is not algorithm:hex")
        if digest.startswith("sha256:") and not _SHA256.fullmatch(digest):
            raise _invalid(text, "a sha256 digest has 64 lowercase hex digits")
    tag = None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        rest, tag = rest.rsplit(":", 1)
        if not _TAG.fullmatch(tag):
            raise _invalid(text, f"tag {tag!r} may only hold letters, digits, '_', '.' and '-'")
    parts = rest.split("/")
    first = parts[0]
    if len(parts) > 1 and (
        "." in first or ":" in first or first == "localhost" or first != first.lower()
    ):
        registry, path = first, parts[1:]
        if not _HOST.fullmatch(registry):
            raise _invalid(text, f"registry {registry!r} is not a host[:port]")
    else:
        registry, path = DOCKER_HUB, parts
    if registry in ("index.docker.io", DOCKER_HUB_API):
        registry = DOCKER_HUB
    if not path or not all(path):
        raise _invalid(text, "the repository name is empty")
    for component in path:
        if not _COMPONENT.fullmatch(component):
            raise _invalid(
                text, f"repository component {component!r} must be lowercase letters and digits"
            )
    if registry == DOCKER_HUB and len(path) == 1:
        path = ["library", *path]
    if tag is None and digest is None:
        tag = DEFAULT_TAG
    return Reference(registry, "/".join(path), tag, digest)


def is_loopback(registry: str) -> bool:
    host = (
        registry.rsplit(":", 1)[0] if not registry.startswith("[") else registry.split("]")[0] + "]"
    )
    return host in ("127.0.0.1", "localhost", "[::1]")


def plain_http(registry: str, insecure: frozenset[str] | set[str]) -> bool:
    """True when the registry is spoken to over plain HTTP: loopback, or configured insecure."""
    return is_loopback(registry) or registry in insecure
