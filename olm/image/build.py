"""FROM-scratch images in pure Python: files -> tar -> gzip layer -> config (labels, diff_ids)
-> OCI manifest. Deterministic: the same files and labels give the same digests.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from olm.image.cache import sha256_digest
from olm.image.layers import tar_bytes
from olm.image.manifest import OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST


@dataclass(frozen=True)
class Blob:
    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return sha256_digest(self.data)

    def descriptor(self) -> dict[str, object]:
        return {"mediaType": self.media_type, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True)
class Image:
    config: Blob
    layers: tuple[Blob, ...]
    manifest: bytes
    media_type: str = OCI_MANIFEST

    @property
    def digest(self) -> str:
        return sha256_digest(self.manifest)


def files_under(directory: Path, prefix: str) -> dict[str, bytes]:
    """Every regular file below `directory`, named `prefix/relative/path`."""
    files = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            files[f"{prefix.strip('/')}/{path.relative_to(directory).as_posix()}"] = (
                path.read_bytes()
            )
    return files


def scratch_image(files: dict[str, bytes], labels: dict[str, str]) -> Image:
    """One layer holding `files`, a config with `labels`, and the manifest naming both."""
    tar = tar_bytes(files)
    layer = Blob(OCI_LAYER_GZIP, gzip.compress(tar, mtime=0))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Labels": dict(sorted(labels.items()))},
        "rootfs": {"type": "layers", "diff_ids": [sha256_digest(tar)]},
        "history": [{"created_by": "olm-py", "comment": "FROM scratch"}],
    }
    config_blob = Blob(OCI_CONFIG, json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": config_blob.descriptor(),
        "layers": [layer.descriptor()],
    }
    return Image(config_blob, (layer,), json.dumps(manifest, sort_keys=True).encode())
