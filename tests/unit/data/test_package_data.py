"""An installed wheel serves the same samples catalog and the same CRDs as the checkout.

The test builds the wheel from a copy of the sources (`pip wheel --no-deps
--no-build-isolation`, offline), installs it with `pip install --no-deps --no-index` into a fresh
venv that borrows only the dependencies of the current one (a `.pth` line, so the editable
install of the checkout is not active there), and reads the package data from that venv.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import olm.data
from tests.support.paths import REPO

SOURCES = ("pyproject.toml", "README.md", "olm", "catalogs", "manifests")

PROBE = """
import json, olm
from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.data import CATALOGS, MANIFESTS
from olm.devcluster.manifests import crd_files
catalog = load(CATALOG.parent)
print(json.dumps({
    "olm": olm.__file__,
    "catalogs": str(CATALOGS),
    "manifests": str(MANIFESTS),
    "packages": sorted(catalog.packages),
    "bundles": sorted(b for p in catalog.packages.values() for b in p.bundles),
    "problems": [str(p) for p in catalog.problems],
    "crds": [p.name for p in crd_files()],
    "samples": sorted(str(p.relative_to(MANIFESTS)) for p in (MANIFESTS / "samples").rglob("*.yaml")),
}))
"""


def _checkout_facts() -> dict[str, object]:
    from olm.catalog.formats import load
    from olm.devcluster.manifests import crd_files

    catalog = load(olm.data.SAMPLES_CATALOG)
    return {
        "packages": sorted(catalog.packages),
        "bundles": sorted(b for p in catalog.packages.values() for b in p.bundles),
        "problems": [str(p) for p in catalog.problems],
        "crds": [p.name for p in crd_files()],
        "samples": sorted(
            str(p.relative_to(olm.data.MANIFESTS))
            for p in (olm.data.MANIFESTS / "samples").rglob("*.yaml")
        ),
    }


def test_the_checkout_reads_the_top_level_folders() -> None:
    assert olm.data.CATALOGS == REPO / "catalogs"
    assert olm.data.MANIFESTS == REPO / "manifests"
    facts = _checkout_facts()
    assert facts["packages"], "the samples catalog is not empty"
    assert facts["crds"], "the CRDs are there"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(
                origin,
                source / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(origin, source / name)
    dist = work / "dist"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"),
            *("--no-build-isolation", "--wheel-dir", str(dist), str(source)),
        ],
        check=True,
        cwd=work,
    )
    (built,) = dist.glob("olm_py-*.whl")
    return built


def test_the_wheel_holds_the_catalogs_and_manifests(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for folder, prefix in ((REPO / "catalogs", "catalogs"), (REPO / "manifests", "manifests")):
        expected = {
            f"olm/data/{prefix}/{path.relative_to(folder).as_posix()}"
            for path in folder.rglob("*")
            if path.is_file()
        }
        assert expected, f"{folder} has files"
        assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"


def test_an_installed_wheel_serves_the_same_catalog_and_crds(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # The dependencies come from the current venv; its .pth files (the editable install of the
    # checkout among them) are not run for a path added this way.
    borrowed = [sysconfig.get_path("purelib"), *site.getsitepackages()]
    (target_site / "borrowed-dependencies.pth").write_text("\n".join(dict.fromkeys(borrowed)))
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"),
            *("--no-deps", "--no-index", str(wheel)),
        ],
        check=True,
        cwd=tmp_path,
    )
    probe = subprocess.run(
        [str(python), "-c", PROBE], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    installed = json.loads(probe.stdout)
    assert Path(installed.pop("olm")).is_relative_to(target_site), "olm comes from the wheel"
    for key in ("catalogs", "manifests"):
        assert Path(installed.pop(key)).is_relative_to(target_site)
    assert installed["packages"], "the samples catalog is not empty"
    assert installed == _checkout_facts()
