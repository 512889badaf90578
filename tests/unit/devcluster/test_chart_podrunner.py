"""The local pod runner runs the chart's olm-py pods as this venv's `olm` (table-driven)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from olm.devcluster.podprograms import (
    is_olm_py_image,
    localize_ports,
    olm_executable,
    program_for,
    resolve_env,
)
from olm.devcluster.standin_opm import localize, opm_argv

OLM = olm_executable()


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("quay.io/olm-py/olm-py:0.1.0", True),
        ("localhost/olm-py:dev", True),
        ("olm-py", True),
        ("registry.local:5000/team/olm-py@sha256:abc", True),
        ("quay.io/olm-py/olm-py-catalog:1", False),
        ("quay.io/operator-framework/olm:v0.28.0", False),
        ("olm-py.local/memcached-operator:v0.0.1", False),
    ],
)
def test_is_olm_py_image(image: str, expected: bool) -> None:
    assert is_olm_py_image(image) is expected


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"command": ["olm"], "args": ["run", "--leader-elect"]}, [*OLM, "run", "--leader-elect"]),
        (
            {"command": ["/opt/venv/bin/olm", "run"], "args": ["--no-samples"]},
            [*OLM, "run", "--no-samples"],
        ),
        ({"args": ["run"]}, [*OLM, "run"]),  # the image's entrypoint is olm
        ({"command": ["sh", "-c", "olm run"]}, None),  # not something this runner can run
    ],
)
def test_program_for_the_olm_py_image(
    container: dict[str, Any], expected: list[str] | None
) -> None:
    assert program_for("quay.io/olm-py/olm-py:0.1.0", container) == expected


def test_program_for_sample_images_is_unchanged() -> None:
    command = program_for("olm-py.local/memcached-operator:v0.0.2")
    assert command is not None and command[-2:] == ["--version", "0.0.2"]
    assert program_for("registry.invalid/tiny:1") is None


def test_the_real_olms_configmap_server_pod_runs_its_stand_in() -> None:
    """OLM's catalog operator serves a ConfigMap catalog from a pod of this image."""
    container = {"command": ["configmap-server", "-c", "cm", "-n", "ns"], "args": ["--debug"]}
    command = program_for(
        "quay.io/operator-framework/configmap-operator-registry:latest", container
    )
    assert command is not None
    assert command[1:] == [
        "-m",
        "olm.devcluster.standin_configmap_server",
        "-c",
        "cm",
        "-n",
        "ns",
        "--debug",
    ]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ["olm", "run", "--health-port=8081", "--metrics-port=8080"],
            ["olm", "run", "--health-port=1001", "--metrics-port=1002"],
        ),
        (["olm", "run", "--health-port", "8081"], ["olm", "run", "--health-port", "1001"]),
        (["olm", "run", "--health-port=9999"], ["olm", "run", "--health-port=9999"]),  # undeclared
        (
            ["olm", "run", "--workers", "8081"],
            ["olm", "run", "--workers", "8081"],
        ),  # not a port flag
    ],
)
def test_localize_ports(command: list[str], expected: list[str]) -> None:
    assert localize_ports(command, {8081: 1001, 8080: 1002}) == expected


def test_the_downward_api_env_of_the_chart() -> None:
    container = {
        "env": [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            },
        ]
    }
    pod = {"metadata": {"name": "olm-py-abc", "namespace": "olm"}, "spec": {}}
    assert resolve_env(container, pod) == {"POD_NAME": "olm-py-abc", "POD_NAMESPACE": "olm"}


def test_an_opm_pod_runs_the_local_opm_on_its_mounted_catalog(tmp_path: Path) -> None:
    command = program_for(
        "quay.io/operator-framework/opm", {"command": ["opm", "serve", "/opt/olm"]}
    )
    assert command is not None and command[1:] == [
        "-m",
        "olm.devcluster.standin_opm",
        "serve",
        "/opt/olm",
    ]
    mounts = {"/opt/olm": str(tmp_path / "catalog"), "/opt": str(tmp_path / "other")}
    argv = opm_argv(
        Path("/bin/opm"), ["serve", "/opt/olm/sub", "-p", "50051"], mounts, tmp_path / "t"
    )
    assert argv == [
        "/bin/opm",
        "serve",
        f"{tmp_path}/catalog/sub",
        "-p",
        "50051",
        "-t",
        f"{tmp_path}/t",
    ]
    given = opm_argv(
        Path("/bin/opm"),
        ["serve", "/opt/olm", "-t", "/dev/termination-log"],
        mounts,
        tmp_path / "t",
    )
    assert given[-2:] == ["-t", f"{tmp_path}/t"] and "/dev/termination-log" not in given
    assert localize(["/opt/olmx", "/opt"], mounts) == [
        f"{tmp_path}/other/olmx",
        f"{tmp_path}/other",
    ]


def test_the_mock_extension_apiserver_answers_discovery_of_its_group() -> None:
    from olm.devcluster.standin_mock_apiserver import answer

    command = program_for(
        "quay.io/operator-framework/mock-extension-apiserver:master",
        {"command": ["/bin/mock-extension-apiserver"], "args": ["--mock-kinds", "Fedora"]},
    )
    assert command is not None and command[-2:] == ["--mock-kinds", "Fedora"]
    listing = answer("/apis/hats.example.com/v1alpha1", "hats.example.com", "v1alpha1", ["Fedora"])
    assert listing is not None and listing["resources"][0]["name"] == "fedoras"
    groups = answer("/apis", "hats.example.com", "v1alpha1", [])
    assert groups is not None and groups["groups"][0]["name"] == "hats.example.com"
    assert answer("/apis/other/v1", "hats.example.com", "v1alpha1", []) is None
