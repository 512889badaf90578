"""The files olm-py ships next to its code, found through the package (importlib.resources).

- `CATALOGS`: the top-level `catalogs/` folder (the samples catalog, `catalogs/samples/`);
- `MANIFESTS`: the top-level `manifests/` folder (the CRDs, namespaces, the global
  OperatorGroup, and the sample operators of `manifests/samples/`).

Both folders stay at the top of the repository, where the guide shows them to users.
`olm/data/catalogs` and `olm/data/manifests` are relative symlinks to them: an editable checkout
reads the folders themselves, and `pip wheel` copies their files into the wheel as
`olm/data/catalogs/...` and `olm/data/manifests/...` (the `package-data` globs in
pyproject.toml), so an installed wheel serves the same samples catalog and installs the same
CRDs. `tests/unit/data/test_package_data.py` builds the wheel and checks it.

Invariant: every path here is a real directory on disk (symlinks resolved), because kubectl and
the catalog loaders are given paths, not package resources. A zipped install is refused with a
clear message instead of serving an empty catalog.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


class PackageDataMissing(RuntimeError):
    """olm-py was installed without its data files (or from a zip)."""


def _folder(name: str) -> Path:
    resource = files(__name__) / name
    if not isinstance(resource, Path) or not resource.is_dir():
        raise PackageDataMissing(
            f"olm-py's {name}/ folder is not installed next to the olm package ({resource}): "
            "reinstall olm-py from a wheel or source checkout (pip install olm-py), not as a zip"
        )
    return resource.resolve()


CATALOGS = _folder("catalogs")
MANIFESTS = _folder("manifests")
SAMPLES_CATALOG = CATALOGS / "samples"
CRDS = MANIFESTS / "crds"
SAMPLE_OPERATORS = MANIFESTS / "samples"
