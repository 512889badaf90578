"""Helm's tool cache: the version stamps, reuse without Go, staleness and clear errors."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from olm.devcluster import tools
from olm.devcluster.tools import (
    HELM_VERSION,
    ensure_helm,
    helm_dir,
    helm_inputs,
    helm_install_args,
    helm_ldflags,
    kube_major_minor,
    tool_problems,
)
from olm.devcluster.verifiedcache import BuildError


@pytest.mark.parametrize(
    ("kubernetes", "expected"),
    [("v1.34.12", ("1", "34")), ("1.35.0", ("1", "35")), ("v2.0.1-rc.1", ("2", "0"))],
)
def test_kube_major_minor(kubernetes: str, expected: tuple[str, str]) -> None:
    assert kube_major_minor(kubernetes) == expected


@pytest.mark.parametrize(
    "stamp",
    [
        "-X helm.sh/helm/v3/internal/version.version=v3.22.0",
        "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1",
        "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=34",
        "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1",
        "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=34",
    ],
)
def test_ldflags_stamp_the_helm_and_kubernetes_versions(stamp: str) -> None:
    assert stamp in helm_ldflags("v3.22.0", "v1.34.12")


def test_install_args_pin_the_module_version() -> None:
    args = helm_install_args("v3.22.0", "v1.34.12")
    assert args[0] == "install"
    assert "-trimpath" in args
    assert args[-1] == "helm.sh/helm/v3/cmd/helm@v3.22.0"
    assert args[args.index("-ldflags") + 1].startswith("-s -w -X ")


def test_helm_lives_in_its_own_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    assert helm_dir() == tmp_path / "tools" / f"helm-{HELM_VERSION}"


def make_complete(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "helm").write_bytes(b"helm binary")
    tools._write_manifest(root, "helm", helm_inputs())


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda root: (root / "manifest.json").unlink(), "never completed"),
        (lambda root: (root / "manifest.json").write_text("{"), "unreadable"),
        (lambda root: (root / "helm").unlink(), "missing"),
        (lambda root: (root / "helm").write_bytes(b"helm"), "wrong size"),
        (lambda root: (root / "helm").write_bytes(b"helm BINARY"), "wrong checksum"),
    ],
)
def test_damaged_cache_is_reported(
    damage: Callable[[Path], object], expected: str, tmp_path: Path
) -> None:
    make_complete(tmp_path)
    assert tool_problems(tmp_path, "helm", helm_inputs()) == []
    damage(tmp_path)
    problems = tool_problems(tmp_path, "helm", helm_inputs())
    assert len(problems) == 1
    assert expected in problems[0]


def test_other_build_inputs_make_the_cache_stale(tmp_path: Path) -> None:
    make_complete(tmp_path)
    other = helm_inputs(kubernetes_version="v1.35.0")
    assert "other inputs" in tool_problems(tmp_path, "helm", other)[0]


def fake_go(tmp_path: Path, marker: Path, version: str = "go1.26.8") -> Path:
    """A `go` that records each call; `version` answers, anything else fails."""
    script = tmp_path / "go"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {marker}\n'
        f'if [ "$1" = version ]; then echo "go version {version} linux/amd64"; exit 0; fi\n'
        "echo 'proxy.golang.org: 404 Not Found'; exit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_complete_cache_is_reused_without_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    make_complete(helm_dir())
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker)))
    assert ensure_helm() == helm_dir() / "helm"
    assert not marker.exists()


def test_failed_build_says_what_to_do_and_leaves_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker)))
    with pytest.raises(BuildError) as caught:
        ensure_helm()
    message = str(caught.value)
    assert "GOPROXY" in message
    assert "build.log" in message
    assert "404 Not Found" in message
    assert not (helm_dir() / "manifest.json").exists()
    assert f"helm.sh/helm/v3/cmd/helm@{HELM_VERSION}" in marker.read_text()


def test_old_go_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker, version="go1.20.1")))
    with pytest.raises(BuildError, match="or newer is needed"):
        ensure_helm()


def test_missing_go_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OLM_PY_GO", str(tmp_path / "no-such-go"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError, match="Go toolchain was not found"):
        ensure_helm()


# ----- kubectl-operator -----------------------------------------------------------------------

KO = "github.com/operator-framework/kubectl-operator"


@pytest.mark.parametrize(
    "stamp",
    [
        f"-X {KO}/internal/version.GitVersion=v0.6.0",
        f"-X {KO}/internal/version.GitCommit=ddb2132976fa3e0ca5da63915c29c77b9240da70",
        f"-X {KO}/internal/version.GitCommitTime=2025-01-16T14:48:46Z",
        f"-X {KO}/internal/version.GitTreeState=clean",
    ],
)
def test_kubectl_operator_is_stamped_with_its_tag(stamp: str) -> None:
    assert stamp in tools.kubectl_operator_ldflags()
    assert tools.kubectl_operator_ldflags().startswith("-s -w ")


def test_kubectl_operator_is_pinned_in_a_wrapper_module(tmp_path: Path) -> None:
    get, download, build = tools.kubectl_operator_go_args(tmp_path)
    assert get == ["get", "-tool", f"{KO}@v0.6.0"]
    assert download == ["mod", "download", "-json", f"{KO}@v0.6.0"]
    assert build[:2] == ["build", "-trimpath"]
    assert build[build.index("-o") + 1] == str(tmp_path / "kubectl-operator")
    assert build[-1] == KO
    assert tools.kubectl_operator_wrapper_go_mod().startswith("module local/")


def test_kubectl_operator_lives_in_its_own_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    assert tools.kubectl_operator_dir() == tmp_path / "tools" / "kubectl-operator-v0.6.0"


def test_other_kubectl_operator_version_makes_the_cache_stale(tmp_path: Path) -> None:
    (tmp_path / "kubectl-operator").write_bytes(b"plugin")
    tools._write_manifest(tmp_path, "kubectl-operator", tools.kubectl_operator_inputs())
    assert tool_problems(tmp_path, "kubectl-operator", tools.kubectl_operator_inputs()) == []
    other = tools.kubectl_operator_inputs("v0.7.0")
    assert "other inputs" in tool_problems(tmp_path, "kubectl-operator", other)[0]


@pytest.mark.parametrize(
    ("downloaded", "expected"),
    [
        ('{"Origin": {"Hash": "ddb2132976fa3e0ca5da63915c29c77b9240da70"}}', None),
        ("{}", None),  # a proxy that records no origin: nothing to contradict
        ('{"Origin": {"Hash": "0123"}}', "update KUBECTL_OPERATOR_COMMIT"),
        ("not json", "no JSON object"),
    ],
)
def test_the_commit_stamp_is_checked_against_the_proxy(
    downloaded: str, expected: str | None
) -> None:
    problem = tools.origin_problem(downloaded)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_complete_kubectl_operator_cache_is_reused_without_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    root = tools.kubectl_operator_dir()
    root.mkdir(parents=True)
    (root / "kubectl-operator").write_bytes(b"plugin")
    tools._write_manifest(root, "kubectl-operator", tools.kubectl_operator_inputs())
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker)))
    assert tools.ensure_kubectl_operator() == root / "kubectl-operator"
    assert not marker.exists()


def test_failed_kubectl_operator_build_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path / "cache"))
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker)))
    with pytest.raises(BuildError) as caught:
        tools.ensure_kubectl_operator()
    message = str(caught.value)
    assert "GOPROXY" in message and "404 Not Found" in message
    assert "make kubectl-operator" in message
    assert not (tools.kubectl_operator_dir() / "manifest.json").exists()
    assert f"get -tool {KO}@v0.6.0" in marker.read_text()


def test_the_tools_command_names_the_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert tools.main(["no-such-tool"]) == 2
    assert "kubectl-operator" in capsys.readouterr().err
