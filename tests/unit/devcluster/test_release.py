"""`make release` / `olm dev release` (olm.devcluster.release): the names a release pushes,
the checks of REGISTRY and VERSION, the released chart's values, the tools' arguments and the
advice read from a failed push. Pure; the pushes themselves are tests/e2e/test_release.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

import olm
from olm.cli import main
from olm.devcluster.release import (
    Release,
    ReleaseError,
    failure_lines,
    helm_package_args,
    helm_push_args,
    plan_release,
    podman_push_args,
    push_hint,
    release_chart_dir,
    release_values,
)
from tests.support.paths import REPO

VALUES = REPO / "charts" / "olm-py" / "values.yaml"


def test_a_release_names_its_image_and_chart_after_the_registry() -> None:
    release = plan_release("quay.io/team/", "1.2.3")
    assert release == Release("quay.io/team", "1.2.3", plain_http=False, insecure=False)
    assert release.host == "quay.io"
    assert release.image == "quay.io/team/olm-py:1.2.3"
    assert release.chart_repository == "oci://quay.io/team/charts"
    assert release.chart == "oci://quay.io/team/charts/olm-py"
    assert release.install_command() == (
        "helm install olm-py oci://quay.io/team/charts/olm-py --version 1.2.3"
    )


def test_the_version_defaults_to_olm_pys() -> None:
    assert plan_release("ghcr.io/owner").version == olm.__version__
    assert plan_release("ghcr.io/owner", "  ").version == olm.__version__


@pytest.mark.parametrize(
    ("registry", "plain", "insecure", "flags"),
    [
        ("127.0.0.1:5000", False, False, ["--plain-http"]),  # loopback: plain HTTP, as olm.image
        ("localhost:5000/x", False, False, ["--plain-http"]),
        ("registry.lan:5000", True, False, ["--plain-http"]),
        ("registry.lan:5000", False, True, ["--insecure-skip-tls-verify"]),
        ("registry.lan:5000", False, False, []),
    ],
)
def test_the_transport(registry: str, plain: bool, insecure: bool, flags: list[str]) -> None:
    release = plan_release(registry, "1.0.0", plain_http=plain, insecure=insecure)
    assert release.transport_flags() == flags
    pushed = podman_push_args(release, "localhost/olm-py:dev", Path("/d"))
    assert ("--tls-verify=false" in pushed) == bool(flags)
    assert pushed[-2:] == ["localhost/olm-py:dev", f"docker://{registry}/olm-py:1.0.0"]


@pytest.mark.parametrize(
    ("registry", "version", "says"),
    [
        ("", None, "REGISTRY is not set"),
        ("   ", None, "make release REGISTRY=<host[:port]/path>"),
        ("oci://quay.io/team", None, "leave out oci://"),
        ("https://quay.io/team", None, "URL scheme"),
        ("team", None, "does not start with a registry host"),
        ("team/olm", None, "host[:port]/path"),
        ("quay.io/Team", None, "lowercase"),
        ("quay.io/team", "1.2", "VERSION '1.2' is not a SemVer version"),
        ("quay.io/team", "v1.2.3", "is not a SemVer"),
        ("quay.io/team", "1.2.3+build.5", "no +build part"),
    ],
)
def test_bad_registry_or_version_is_named(registry: str, version: str | None, says: str) -> None:
    with pytest.raises(ReleaseError) as caught:
        plan_release(registry, version)
    assert says in str(caught.value)


@pytest.mark.parametrize("version", ["0.1.0", "1.0.0-rc.1", "2.3.4-alpha-2.x"])
def test_semver_versions_are_taken(version: str) -> None:
    assert plan_release("r.example/x", version).version == version


def test_the_released_values_name_the_pushed_image_and_keep_the_rest() -> None:
    text = VALUES.read_text()
    released = release_values(text, "r.example/team/olm-py", "1.2.3")
    values, original = yaml.safe_load(released), yaml.safe_load(text)
    assert values["image"] == {
        **original["image"],
        "repository": "r.example/team/olm-py",
        "tag": "1.2.3",
    }
    assert {k: v for k, v in values.items() if k != "image"} == {
        k: v for k, v in original.items() if k != "image"
    }
    assert "# The image released with this chart (`make release`)." in released
    assert "there is no default" not in released.lower()  # the repo chart's comment is dropped
    assert original["image"]["repository"] == ""  # the checkout's chart names no image


def test_values_without_an_image_block_are_refused() -> None:
    with pytest.raises(ReleaseError, match="no `image:` block"):
        release_values("replicas: 2\n", "r.example/olm-py", "1.0.0")
    # A `repository:` elsewhere is not the image's.
    with pytest.raises(ReleaseError, match="no `image:` block"):
        release_values("other:\n  repository: x\n  tag: y\n", "r.example/olm-py", "1.0.0")


def test_the_release_chart_is_a_copy_with_the_crds_resolved(tmp_path: Path) -> None:
    release = plan_release("r.example/team", "1.2.3")
    chart = release_chart_dir(REPO, release, tmp_path)
    assert chart.parent == tmp_path
    assert not (chart / "crds").is_symlink() and len(list((chart / "crds").glob("*.yaml"))) == 8
    assert yaml.safe_load((chart / "values.yaml").read_text())["image"]["tag"] == "1.2.3"
    assert yaml.safe_load(VALUES.read_text())["image"]["repository"] == "", "checkout unchanged"


def test_the_helm_arguments() -> None:
    release = plan_release("127.0.0.1:5000", "1.2.3")
    helm = Path("/h/helm")
    assert helm_package_args(helm, Path("/c"), Path("/out"), "1.2.3") == [
        *("/h/helm", "package", "/c", "--version", "1.2.3", "--app-version", "1.2.3"),
        *("--destination", "/out"),
    ]
    assert helm_push_args(helm, Path("/out/olm-py-1.2.3.tgz"), release) == [
        *("/h/helm", "push", "/out/olm-py-1.2.3.tgz", "oci://127.0.0.1:5000/charts"),
        "--plain-http",
    ]


@pytest.mark.parametrize(
    ("output", "advice"),
    [
        (
            'Get "https://r.lan/v2/": http: server gave HTTP response to HTTPS client',
            "PLAIN_HTTP=1",
        ),
        ("x509: certificate signed by unknown authority", "INSECURE=1"),
        ("Error: unauthorized: authentication required", "podman login r.lan:5000"),
        ("denied: requested access to the resource is denied", "podman login r.lan:5000"),
        ("dial tcp 10.0.0.1:5000: connect: connection refused", "Nothing answers at r.lan:5000"),
        ("something else", "Check REGISTRY"),
    ],
)
def test_a_failed_push_says_what_to_do(output: str, advice: str) -> None:
    release = plan_release("r.lan:5000/team", "1.0.0")
    assert advice in push_hint(output, release, "podman login")


def test_failure_lines_prefer_the_tools_error_lines() -> None:
    output = "Copying blob a\nwarning: retrying\nError: pinging registry: refused\n"
    assert failure_lines(output) == ["Error: pinging registry: refused"]
    assert failure_lines("\n".join(str(n) for n in range(20))) == [str(n) for n in range(12, 20)]


def test_the_make_target_runs_olm_dev_release_with_its_variables() -> None:
    def dry_run(*variables: str) -> str:
        # Under another make (`make test`, `make test-busy`) the inherited MAKEFLAGS would add
        # "Entering/Leaving directory" lines: this make stands alone.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        result = subprocess.run(
            ["make", "-n", "-s", "--no-print-directory", "-C", str(REPO), "release", *variables],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        return result.stdout.strip().splitlines()[-1]

    line = dry_run("REGISTRY=r.lan:5000/team", "VERSION=1.2.3", "PLAIN_HTTP=1", "INSECURE=1")
    assert line.split() == [
        *(".venv/bin/olm", "dev", "release", "--registry", "'r.lan:5000/team'"),
        *("--version", "'1.2.3'", "--plain-http", "--insecure"),
    ]
    assert dry_run("REGISTRY=r.lan/team").split()[3:] == ["--registry", "'r.lan/team'"]


def test_olm_dev_release_without_a_registry_says_how(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev", "release", "--no-build"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("error: REGISTRY is not set") and "make release REGISTRY=" in error
