"""Layers applied in order, with whiteouts, never writing outside the root."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from olm.image.errors import ImageError, ImageErrorKind
from olm.image.layers import apply_layers, clean_name, read_file, tar_bytes

# An entry: (name, content) for a file, (name, None) for a directory, (name, "->target") a symlink.
Entry = tuple[str, str | None]


def layer(tmp: Path, name: str, entries: list[Entry], compress: bool = True) -> tuple[Path, str]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, content in entries:
            info = tarfile.TarInfo(path)
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif content.startswith("->"):
                info.type, info.linkname = tarfile.SYMTYPE, content[2:]
                tar.addfile(info)
            else:
                data = content.encode()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    blob = tmp / name
    blob.write_bytes(gzip.compress(buffer.getvalue()) if compress else buffer.getvalue())
    return blob, ""


def tree(root: Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[key] = "->" + str(path.readlink())
        elif path.is_dir():
            found[key] = None
        else:
            found[key] = path.read_text()
    return found


CASES: list[tuple[str, list[list[Entry]], str | None, dict[str, str | None]]] = [
    (
        "upper layer overrides a file",
        [[("configs/a.yaml", "1")], [("configs/a.yaml", "2")]],
        None,
        {"configs": None, "configs/a.yaml": "2"},
    ),
    (
        "whiteout deletes a file of a lower layer",
        [[("configs/a", "1"), ("configs/b", "1")], [("configs/.wh.a", "")]],
        None,
        {"configs": None, "configs/b": "1"},
    ),
    (
        "whiteout deletes a directory",
        [[("configs/p/a", "1"), ("keep", "k")], [(".wh.configs", "")]],
        None,
        {"keep": "k"},
    ),
    (
        "opaque directory hides the lower layers' content but keeps this layer's",
        [
            [("configs/old", "1"), ("configs/sub/x", "1")],
            [("configs/new", "2"), ("configs/.wh..wh..opq", "")],
        ],
        None,
        {"configs": None, "configs/new": "2"},
    ),
    (
        "a file replaces a directory",
        [[("configs/p/a", "1")], [("configs/p", "file")]],
        None,
        {"configs": None, "configs/p": "file"},
    ),
    (
        "a directory replaces a file",
        [[("configs/p", "file")], [("configs/p/a", "1")]],
        None,
        {"configs": None, "configs/p": None, "configs/p/a": "1"},
    ),
    (
        "only a path prefix is unpacked",
        [[("bin/opm", "x"), ("configs/a", "1"), ("configsx", "no")]],
        "/configs",
        {"configs": None, "configs/a": "1"},
    ),
    (
        "leading ./ and / are taken relative to the root",
        [[("./configs/a", "1"), ("/configs/b", "2")]],
        None,
        {"configs": None, "configs/a": "1", "configs/b": "2"},
    ),
    (
        "a symlinked directory in a parent path is replaced, never written through",
        [[("configs", "->/etc")], [("configs/a", "1")]],
        None,
        {"configs": None, "configs/a": "1"},
    ),
    (
        "a whiteout below a symlink removes nothing outside",
        [[("link", "->/etc")], [("link/.wh.passwd", "")]],
        None,
        {"link": "->/etc"},
    ),
]


@pytest.mark.parametrize(("story", "layers", "only", "expected"), CASES, ids=[c[0] for c in CASES])
def test_layers_apply_in_order(
    tmp_path: Path,
    story: str,
    layers: list[list[Entry]],
    only: str | None,
    expected: dict[str, str | None],
) -> None:
    blobs = [
        layer(tmp_path, f"l{i}", entries, compress=i % 2 == 0) for i, entries in enumerate(layers)
    ]
    root = tmp_path / "root"
    apply_layers(blobs, root, only)
    assert tree(root) == expected


def test_an_entry_escaping_the_root_is_refused(tmp_path: Path) -> None:
    blob = layer(tmp_path, "evil", [("../../escaped", "x")])
    with pytest.raises(ImageError) as raised:
        apply_layers([blob], tmp_path / "root")
    assert raised.value.kind is ImageErrorKind.CORRUPT
    assert not (tmp_path / "escaped").exists()


@pytest.mark.parametrize(
    ("content", "compression", "kind"),
    [
        (b"\x1f\x8bnot really gzip", "", ImageErrorKind.CORRUPT),
        (b"garbage" * 100, "", ImageErrorKind.CORRUPT),
        (b"", "zstd", ImageErrorKind.UNSUPPORTED),
    ],
)
def test_unreadable_layers(
    tmp_path: Path, content: bytes, compression: str, kind: ImageErrorKind
) -> None:
    blob = tmp_path / "blob"
    blob.write_bytes(content)
    with pytest.raises(ImageError) as raised:
        apply_layers([(blob, compression)], tmp_path / "root")
    assert raised.value.kind is kind


@pytest.mark.parametrize(
    ("name", "expected"),
    [("a/b", "a/b"), ("./a/./b/", "a/b"), ("/a", "a"), (".", ""), ("a/../b", None), ("..", None)],
)
def test_clean_name(name: str, expected: str | None) -> None:
    assert clean_name(name) == expected


def test_tar_bytes_is_deterministic_and_has_parent_directories(tmp_path: Path) -> None:
    files = {"configs/p/catalog.yaml": b"x", "configs/q.json": b"{}"}
    assert tar_bytes(files) == tar_bytes(dict(reversed(list(files.items()))))
    blob = tmp_path / "layer"
    blob.write_bytes(tar_bytes(files))
    apply_layers([(blob, "tar")], tmp_path / "root")
    assert read_file(tmp_path / "root", "/configs/p/catalog.yaml") == b"x"
    assert read_file(tmp_path / "root", "../layer") is None
