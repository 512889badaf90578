"""The image tooling's pure parts: cache keys, paths and the argument lists it runs."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from olm.devcluster import image
from olm.devcluster.image import (
    constraints_from_freeze,
    copy_source,
    fingerprint,
    image_tags,
    installed_requirements,
    podman_build_args,
    tree_digest,
    wheel_args,
    wheelhouse_key,
)
from olm.devcluster.image_base import (
    BASE_IMAGE,
    CONTAINERS_CONF,
    PINNED_BASE,
    BaseInputs,
    apt_commands,
    base_tarball,
    containers_conf_path,
    mmdebstrap_args,
    podman_env,
    podman_import_args,
    tarball_problems,
)


def test_base_key_is_stable_and_short() -> None:
    assert BaseInputs().key() == PINNED_BASE.key()
    assert len(PINNED_BASE.key()) == 16


@pytest.mark.parametrize(
    "change",
    [
        {"suite": "trixie"},
        {"variant": "apt"},
        {"packages": ("python3",)},
        {"mirrors": ("deb http://mirror.example/debian bookworm main",)},
        {"customize_hooks": ()},
        {"env_path": "/usr/bin:/bin"},
        {"hook_dir": "/elsewhere"},
    ],
)
def test_every_input_changes_the_base_key_and_tarball(change: dict[str, object]) -> None:
    other = dataclasses.replace(PINNED_BASE, **change)  # type: ignore[arg-type]
    assert other.key() != PINNED_BASE.key()
    assert base_tarball(other, Path("/c")) != base_tarball(PINNED_BASE, Path("/c"))


def test_tarball_lives_in_the_cache_outside_the_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    tarball = base_tarball()
    assert tarball.parent == tmp_path / "images"
    assert PINNED_BASE.key() in tarball.name


def test_apt_waits_for_the_lock_and_skips_recommends() -> None:
    update, install = apt_commands(["podman", "runc"])
    assert update == ["apt-get", "-o", "DPkg::Lock::Timeout=600", "update"]
    assert install[:3] == ["apt-get", "-o", "DPkg::Lock::Timeout=600"]
    assert install[3:] == ["install", "-y", "--no-install-recommends", "podman", "runc"]


def test_mmdebstrap_args() -> None:
    args = mmdebstrap_args(Path("/out/base.tar"))
    assert args[0] == "mmdebstrap"
    assert "--variant=minbase" in args
    assert "--include=python3,python3-venv,python3-pip,ca-certificates,netbase" in args
    assert 'rm -f "$1"/usr/lib/python3.11/EXTERNALLY-MANAGED' in [
        arg.removeprefix("--customize-hook=") for arg in args
    ]
    # positional: suite, target, then the mirrors
    suite_at = args.index("bookworm")
    assert args[suite_at + 1] == "/out/base.tar"
    assert args[suite_at + 2 :] == list(PINNED_BASE.mirrors)


def test_import_tags_the_upstream_name() -> None:
    args = podman_import_args(Path("/t.tar"))
    assert args[:2] == ["podman", "import"]
    assert args[-2:] == ["/t.tar", BASE_IMAGE]
    assert "ENV PATH=/usr/local/bin:/usr/bin:/bin" in args


@pytest.mark.parametrize(
    ("revision", "expect_revision"),
    [("abc123", True), (None, False)],
)
def test_build_is_offline_and_tags_dev_and_version(
    revision: str | None, expect_revision: bool
) -> None:
    args = podman_build_args(Path("/ctx"), "1.2.3", revision)
    assert args[:4] == ["podman", "build", "--pull=never", "--network=none"]
    assert "--layers=false" in args
    assert args[-1] == "/ctx"
    assert args[args.index("--file") + 1] == "/ctx/Dockerfile"
    tags = [args[i + 1] for i, arg in enumerate(args) if arg == "--tag"]
    assert tags == ["localhost/olm-py:dev", "localhost/olm-py:1.2.3"]
    assert "VERSION=1.2.3" in args
    assert ("REVISION=abc123" in args) is expect_revision


def test_image_tags() -> None:
    assert image_tags("0.1.0") == ["localhost/olm-py:dev", "localhost/olm-py:0.1.0"]


@pytest.mark.parametrize(
    ("constraints", "expected_tail"),
    [
        (Path("/w/c.txt"), ["--constraint", "/w/c.txt", "/repo"]),
        (None, ["--wheel-dir", "/w/wheels", "/repo"]),
    ],
)
def test_wheel_args(constraints: Path | None, expected_tail: list[str]) -> None:
    args = wheel_args("/venv/bin/python", Path("/repo"), Path("/w/wheels"), constraints)
    assert args[:4] == ["/venv/bin/python", "-m", "pip", "wheel"]
    assert args[-len(expected_tail) :] == expected_tail


@pytest.mark.parametrize(
    ("freeze", "expected"),
    [
        ("kopf==1.44.6\nPyYAML==6.0.2\n", "kopf==1.44.6\nPyYAML==6.0.2\n"),
        ("# Editable install\n-e /work/main\nsemver==3.0.4\n", "semver==3.0.4\n"),
        ("olm-py==0.1.0\nolm_py==0.1.0\ngrpcio==1.85.0\n", "grpcio==1.85.0\n"),
        ("foo @ file:///tmp/foo.whl\nbar==1\n", "bar==1\n"),
        ("", "\n"),
    ],
)
def test_constraints_pin_what_the_venv_runs(freeze: str, expected: str) -> None:
    assert constraints_from_freeze(freeze) == expected


def test_podman_gets_our_own_containers_conf(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    env = podman_env()
    assert env["CONTAINERS_CONF"] == str(containers_conf_path())
    assert containers_conf_path().read_text() == CONTAINERS_CONF
    assert 'runtime = "runc"' in CONTAINERS_CONF
    assert "nofile=" in CONTAINERS_CONF


@pytest.mark.parametrize(
    ("record", "content", "expected"),
    [
        (None, b"tar", "never completed"),
        ("{", b"tar", "unreadable"),
        ({"size": 3, "sha256": "0" * 64}, b"tar", "wrong checksum"),
        ({"size": 9, "sha256": "0" * 64}, b"tar", "wrong size"),
        ({"size": 3, "sha256": "0" * 64}, None, "missing"),
    ],
)
def test_tarball_problems(
    record: object, content: bytes | None, expected: str, tmp_path: Path
) -> None:
    tarball = tmp_path / "base.tar"
    if content is not None:
        tarball.write_bytes(content)
    if record is not None:
        text = record if isinstance(record, str) else json.dumps(record)
        tarball.with_suffix(".json").write_text(text)
    problems = tarball_problems(tarball)
    assert len(problems) == 1
    assert expected in problems[0]


def test_complete_tarball_has_no_problems(tmp_path: Path) -> None:
    import hashlib

    tarball = tmp_path / "base.tar"
    tarball.write_bytes(b"tar")
    record = {"size": 3, "sha256": hashlib.sha256(b"tar").hexdigest()}
    tarball.with_suffix(".json").write_text(json.dumps(record))
    assert tarball_problems(tarball) == []


def make_checkout(root: Path) -> Path:
    (root / "olm" / "data").mkdir(parents=True)
    (root / "olm" / "__init__.py").write_text("")
    (root / "olm" / "__pycache__").mkdir()
    (root / "olm" / "__pycache__" / "x.pyc").write_bytes(b"pyc")
    (root / "catalogs" / "samples").mkdir(parents=True)
    (root / "catalogs" / "samples" / "c.yaml").write_text("schema: olm.package\n")
    (root / "olm" / "data" / "catalogs").symlink_to("../../catalogs")
    (root / "pyproject.toml").write_text("[project]\nname = 'olm-py'\n")
    (root / "tests").mkdir()
    (root / "tests" / "t.py").write_text("")
    return root


def test_copy_source_takes_what_the_wheel_is_made_of(tmp_path: Path) -> None:
    repo = make_checkout(tmp_path / "repo")
    source = copy_source(repo, tmp_path / "source")
    assert (source / "olm" / "data" / "catalogs").is_symlink()
    assert (source / "olm" / "data" / "catalogs" / "samples" / "c.yaml").is_file()
    assert not (source / "olm" / "__pycache__").exists()
    assert not (source / "tests").exists()
    assert (source / "pyproject.toml").is_file()


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "olm" / "__init__.py").write_text("x = 1\n"),
        lambda root: (root / "olm" / "new.py").write_text(""),
        lambda root: (root / "catalogs" / "samples" / "c.yaml").unlink(),
        lambda root: (root / "catalogs" / "samples" / "c.yaml").rename(
            root / "catalogs" / "samples" / "d.yaml"
        ),
    ],
)
def test_any_source_change_changes_the_digest(
    change: Callable[[Path], object], tmp_path: Path
) -> None:
    root = make_checkout(tmp_path / "repo")
    before = tree_digest(root)
    assert tree_digest(root) == before
    change(root)
    assert tree_digest(root) != before


def test_fingerprint_depends_on_every_part_not_on_order() -> None:
    parts = {"source": "a", "base": "b", "version": "0.1.0"}
    assert fingerprint(parts) == fingerprint(dict(reversed(list(parts.items()))))
    for name in parts:
        assert fingerprint({**parts, name: "other"}) != fingerprint(parts)


def test_wheelhouse_key_follows_versions_and_declared_dependencies() -> None:
    key = wheelhouse_key("kopf==1\n", b"deps = []")
    assert key == wheelhouse_key("kopf==1\n", b"deps = []")
    assert key != wheelhouse_key("kopf==2\n", b"deps = []")
    assert key != wheelhouse_key("kopf==1\n", b"deps = ['x']")


def test_installed_requirements_pin_the_venv_like_pip_freeze() -> None:
    lines = constraints_from_freeze(installed_requirements()).splitlines()
    names = {line.split("==")[0].lower() for line in lines}
    assert "pytest" in names
    assert "pip" not in names  # packaging tools are left out, as pip freeze does
    assert "olm-py" not in names  # the editable checkout itself
    assert all("==" in line for line in lines)


def test_two_builders_of_the_dependency_wheels_wait_for_each_other(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two `make test` of two clones building the same wheelhouse at once: one builds, the
    other waits and reuses it (before the lock, the second removed the first's folder)."""
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    builds: list[str] = []

    def fake_pip(args: list[str], *_: object, **__: object) -> None:
        wheel_dir = Path(args[args.index("--wheel-dir") + 1])
        builds.append(str(wheel_dir))
        time.sleep(0.2)  # long enough for the other builder to arrive while this one builds
        (wheel_dir / "dep-1.0-py3-none-any.whl").write_text("wheel")

    monkeypatch.setattr(image, "run_step", fake_pip)
    results: list[list[Path]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(image.ensure_dependency_wheels(tmp_path, "", "k"))
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert [[p.name for p in r] for r in results] == [["dep-1.0-py3-none-any.whl"]] * 2
    assert all(path.is_file() for r in results for path in r)
