"""A bounded on-disk cache of blobs (layers, configs, manifests), keyed by digest.

A blob is stored only after its sha256 was checked, under `<root>/sha256/<hex>`, so what is in
the cache is always what its name says. Each use touches the file; when the cache grows past
`max_bytes`, the least recently used blobs go first (`to_evict`, pure), never one in use.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from olm.image.errors import ImageError, ImageErrorKind

DEFAULT_MAX_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class CachedBlob:
    digest: str
    size: int
    last_used: float


def to_evict(
    blobs: Iterable[CachedBlob], max_bytes: int, keep: frozenset[str] = frozenset()
) -> list[str]:
    """The digests to delete, least recently used first, so the rest fits in `max_bytes`."""
    everything = sorted(blobs, key=lambda b: (b.last_used, b.digest))
    total = sum(b.size for b in everything)
    evicted = []
    for blob in everything:
        if total <= max_bytes:
            break
        if blob.digest in keep:
            continue
        evicted.append(blob.digest)
        total -= blob.size
    return evicted


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "olm-py" / "images"


def sha256_digest(data: bytes) -> str:
    """The content's digest as OCI names it: `sha256:<hex>`."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_digest(digest: str) -> str:
    algorithm, _, hexpart = digest.partition(":")
    if (
        algorithm != "sha256"
        or len(hexpart) != 64
        or not all(c in "0123456789abcdef" for c in hexpart)
    ):
        raise ImageError(
            ImageErrorKind.UNSUPPORTED, f"digest {digest!r} is not a sha256 digest olm-py can check"
        )
    return hexpart


class BlobCache:
    def __init__(self, root: Path | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root or default_cache_dir()
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def path(self, digest: str) -> Path:
        return self.root / "sha256" / check_digest(digest)

    def get(self, digest: str) -> Path | None:
        path = self.path(digest)
        if not path.is_file():
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return path

    def writer(self) -> tempfile._TemporaryFileWrapper[bytes]:
        (self.root / "sha256").mkdir(parents=True, exist_ok=True)
        return tempfile.NamedTemporaryFile(
            dir=self.root / "sha256", prefix=".partial-", delete=False
        )

    def commit(self, temporary: Path, digest: str, observed: str) -> Path:
        """Move a downloaded blob in place once its digest matched (else delete it)."""
        if observed != digest:
            temporary.unlink(missing_ok=True)
            raise ImageError(
                ImageErrorKind.CORRUPT,
                f"the registry sent a blob whose content does not match its digest {digest[:19]}... "
                f"(got {observed[:19]}...): the image in the registry is corrupt",
            )
        target = self.path(digest)
        temporary.replace(target)
        return target

    def put_bytes(self, digest: str, data: bytes) -> Path:
        observed = sha256_digest(data)
        with self.writer() as out:
            out.write(data)
        return self.commit(Path(out.name), digest, observed)

    def blobs(self) -> list[CachedBlob]:
        found = []
        for path in (self.root / "sha256").glob("*") if (self.root / "sha256").is_dir() else []:
            if path.name.startswith(".partial-"):
                continue
            with contextlib.suppress(OSError):
                stat = path.stat()
                found.append(CachedBlob("sha256:" + path.name, stat.st_size, stat.st_mtime))
        return found

    def trim(self, keep: frozenset[str] = frozenset()) -> list[str]:
        with self._lock:
            evicted = to_evict(self.blobs(), self.max_bytes, keep)
            for digest in evicted:
                self.path(digest).unlink(missing_ok=True)
        return evicted
