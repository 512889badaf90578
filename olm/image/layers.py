"""Apply image layers (tar archives) to a directory, as container runtimes do.

- `.wh.<name>` deletes `<name>` from the layers below; `.wh..wh..opq` in a directory hides
  everything the layers below put there (what this layer adds to it stays);
- a path that exists with another type (a file where a directory comes) is replaced;
- absolute entry names are taken relative to the root; hard links are copied, devices and FIFOs skipped, owners and modes not kept beyond 0o755 /
  0o644 (the content is read, never run).

Invariants: nothing is ever written outside `root`: entries with `..` are refused, and no write goes through a symlink (a symlink in a parent path is replaced by a
directory, like an overlay mount would show it). With `only`, entries outside that path prefix
are skipped (reading `/configs` of a catalog image does not unpack the rest).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import posixpath
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from olm.image.errors import ImageError, ImageErrorKind

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"


def clean_name(name: str) -> str | None:
    """The entry's path relative to the root ('' for the root), or None when it escapes."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts)


def _under(path: str, only: str | None) -> bool:
    if not only:
        return True
    prefix = only.strip("/")
    return (
        not prefix
        or path == prefix
        or path.startswith(prefix + "/")
        or prefix.startswith(path + "/")
    )


def _remove(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()


def _safe_parent(root: Path, relative: str) -> Path:
    """Make the parent directories of `relative` under `root`, never through a symlink."""
    current = root
    for part in relative.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        if not current.exists():
            current.mkdir(mode=0o755)
    return root / relative


@contextlib.contextmanager
def open_layer(path: Path, compression: str = "") -> Iterator[tarfile.TarFile]:
    """A random-access tar reader over a layer blob: gzip (decompressed to a temporary file
    beside it) or plain tar, sniffed when `compression` is ''."""
    if compression == "zstd":
        raise ImageError(
            ImageErrorKind.UNSUPPORTED,
            "the image has a zstd-compressed layer, which olm-py does not read; push it with "
            "gzip layers",
        )
    with path.open("rb") as stream:
        head = stream.read(2)
    try:
        if head == b"\x1f\x8b":
            with tempfile.TemporaryFile(dir=path.parent) as plain:
                with gzip.open(path, "rb") as unzipped:
                    shutil.copyfileobj(unzipped, plain)
                plain.seek(0)
                with tarfile.open(fileobj=plain, mode="r:") as tar:
                    yield tar
        else:
            with tarfile.open(path, mode="r:") as tar:
                yield tar
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ImageError(
            ImageErrorKind.CORRUPT, "an image layer is not a readable tar archive", repr(exc)
        ) from exc


def apply_layer(tar: tarfile.TarFile, root: Path, only: str | None = None) -> None:
    """Apply one layer to `root` (the layers below it already applied)."""
    try:
        members = tar.getmembers()
        _apply(tar, members, root, only)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ImageError(
            ImageErrorKind.CORRUPT, "an image layer is not a readable tar archive", repr(exc)
        ) from exc


def _apply(
    tar: tarfile.TarFile, members: list[tarfile.TarInfo], root: Path, only: str | None
) -> None:
    # First the whiteouts (they speak of the layers below), then this layer's own entries.
    entries: list[tuple[str, tarfile.TarInfo]] = []
    for member in members:
        relative = clean_name(member.name)
        if relative is None:
            raise ImageError(
                ImageErrorKind.CORRUPT,
                f"an image layer has an entry that escapes the image root ({member.name!r})",
            )
        if not relative or not _under(relative, only):
            continue
        directory, base = posixpath.split(relative)
        if base == OPAQUE:
            target = root / directory if directory else root
            if target.is_dir() and not target.is_symlink():
                for child in target.iterdir():
                    _remove(child)
            continue
        if base.startswith(WHITEOUT):
            hidden = posixpath.join(directory, base[len(WHITEOUT) :])
            target = root / hidden
            if _no_symlink_parents(root, hidden) and (target.exists() or target.is_symlink()):
                _remove(target)
            continue
        entries.append((relative, member))
    for relative, member in entries:
        _extract(tar, member, root, relative)


def _no_symlink_parents(root: Path, relative: str) -> bool:
    current = root
    for part in relative.split("/")[:-1]:
        current = current / part
        if current.is_symlink():
            return False
    return True


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path, relative: str) -> None:
    target = _safe_parent(root, relative)
    if member.isdir():
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            _remove(target)
        target.mkdir(mode=0o755, exist_ok=True)
        return
    if target.is_symlink() or target.exists():
        _remove(target)
    if member.issym():
        target.symlink_to(member.linkname)
    elif member.islnk():
        source = clean_name(member.linkname)
        origin = root / source if source else None
        if origin is not None and origin.is_file() and not origin.is_symlink():
            shutil.copyfile(origin, target)
    elif member.isreg():
        reader = tar.extractfile(member)
        assert reader is not None
        with reader, target.open("wb") as out:
            shutil.copyfileobj(reader, out)
        target.chmod(0o755 if member.mode & 0o111 else 0o644)
    # devices, FIFOs: nothing to read in them


def apply_layers(paths: list[tuple[Path, str]], root: Path, only: str | None = None) -> None:
    """Apply layer blobs (path, compression) in order, lowest first."""
    root.mkdir(parents=True, exist_ok=True)
    for path, compression in paths:
        with open_layer(path, compression) as tar:
            apply_layer(tar, root, only)


def read_file(root: Path, relative: str) -> bytes | None:
    """A regular file of the unpacked image (symlinks inside the image followed, never out)."""
    target = (root / relative.strip("/")).resolve()
    if not target.is_relative_to(root.resolve()) or not target.is_file():
        return None
    return target.read_bytes()


def tar_bytes(files: dict[str, bytes]) -> bytes:
    """A deterministic tar of `files` (path -> content), parent directories included."""
    buffer = io.BytesIO()
    directories: set[str] = set()
    for path in files:
        parts = path.strip("/").split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            directories.add("/".join(parts[:depth]))
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in sorted(directories):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for path in sorted(files):
            data = files[path]
            info = tarfile.TarInfo(path.strip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
