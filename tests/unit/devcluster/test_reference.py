"""The reference OLM's pure parts: how it is built, checked in the cache, run and prepared."""

from __future__ import annotations

import itertools
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from olm.app import SAMPLES_SOURCE
from olm.controllers.catalogsource import GLOBAL_NAMESPACE
from olm.devcluster import reference as ref
from olm.devcluster import reference_build as refbuild
from olm.devcluster.cluster import REFERENCE_ENV, REFERENCE_KEY, ClusterError, DevCluster
from olm.devcluster.ports import free_ports

M = "github.com/operator-framework/operator-lifecycle-manager"


def test_the_build_pins_every_command_and_stamps_the_version() -> None:
    assert refbuild.go_get_args() == [
        "get",
        "-tool",
        f"{M}/cmd/olm@v0.38.0",
        f"{M}/cmd/catalog@v0.38.0",
        f"{M}/cmd/package-server@v0.38.0",
    ]
    args = refbuild.go_build_args(Path("/out"))
    assert args[:4] == ["build", "-trimpath", "-tags", "json1"]
    assert args[args.index("-ldflags") + 1] == f"-s -w -X {M}/pkg/version.OLMVersion=v0.38.0"
    assert args[args.index("-o") + 1] == "/out/"  # a directory: one binary per command
    assert args[-3:] == [f"{M}/cmd/olm", f"{M}/cmd/catalog", f"{M}/cmd/package-server"]
    assert refbuild.wrapper_go_mod().startswith("module local/olmbin\n")


@pytest.mark.parametrize(
    ("base", "gosumdb"),
    [
        ({"PATH": "/bin"}, "off"),
        ({"PATH": "/bin", "OLM_PY_GOSUMDB": "sum.golang.org"}, "sum.golang.org"),
    ],
)
def test_the_build_environment(base: dict[str, str], gosumdb: str) -> None:
    env = refbuild.go_env(base)
    assert env["PATH"] == "/bin"
    assert env["GOSUMDB"] == gosumdb
    assert env["CGO_ENABLED"] == "0" and env["GOTOOLCHAIN"] == "local"
    assert "-mod=mod" in env["GOFLAGS"].split()


def _complete_cache(root: Path) -> dict[str, str]:
    (root / "crds").mkdir(parents=True)
    (root / "olm").write_bytes(b"olm binary")
    (root / "catalog").write_bytes(b"catalog binary")
    (root / "package-server").write_bytes(b"package-server binary")
    (root / "crds" / "operators.coreos.com_subscriptions.yaml").write_text("kind: CRD\n")
    inputs = refbuild.build_inputs()
    refbuild._write_manifest(root, inputs)
    return inputs


def _truncate(root: Path) -> None:
    (root / "olm").write_bytes(b"olm")


def _corrupt(root: Path) -> None:
    (root / "catalog").write_bytes(b"catalog BINARY")


def _drop_manifest(root: Path) -> None:
    (root / "manifest.json").unlink()


def _garble_manifest(root: Path) -> None:
    (root / "manifest.json").write_text("{not json")


def _lose_crd(root: Path) -> None:
    (root / "crds" / "operators.coreos.com_subscriptions.yaml").unlink()


def _forget_crds(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("crds/")}
    (root / "manifest.json").write_text(json.dumps(manifest))


def _other_version(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["inputs"]["version"] = "v0.37.0"
    (root / "manifest.json").write_text(json.dumps(manifest))


def _built_before_package_server(root: Path) -> None:
    """A cache as the build made it before package-server was added (two commands)."""
    (root / "package-server").unlink()
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["inputs"]["commands"] = "olm,catalog"
    del manifest["files"]["package-server"]
    (root / "manifest.json").write_text(json.dumps(manifest))


def _forget_package_server(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["files"]["package-server"]
    (root / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (None, None),
        (_built_before_package_server, "built from other inputs"),
        (_forget_package_server, "package-server is not listed"),
        (_drop_manifest, "missing (the build was never completed)"),
        (_garble_manifest, "unreadable"),
        (_other_version, "built from other inputs"),
        (_truncate, "wrong size"),
        (_corrupt, "wrong checksum"),
        (_lose_crd, "operators.coreos.com_subscriptions.yaml is missing"),
        (_forget_crds, "no CRDs are listed"),
    ],
)
def test_the_cache_is_usable_only_when_complete_and_built_from_the_same_inputs(
    tmp_path: Path, damage: Any, expected: str | None
) -> None:
    inputs = _complete_cache(tmp_path)
    if damage is not None:
        damage(tmp_path)
    problems = refbuild.cache_problems(tmp_path, inputs)
    if expected is None:
        assert problems == []
    else:
        assert any(expected in problem for problem in problems), problems


def test_a_complete_cache_is_reused_without_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    _complete_cache(refbuild.reference_dir())
    monkeypatch.setenv("OLM_PY_GO", str(tmp_path / "no-such-go"))
    assert refbuild.ensure_reference_olm().olm == tmp_path / "tools" / "olm-v0.38.0" / "olm"


def test_an_incomplete_cache_is_not_built_when_building_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    with pytest.raises(refbuild.BuildError, match="make reference-olm"):
        refbuild.ensure_reference_olm(build=False)


def test_a_missing_go_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLM_PY_CACHE", str(tmp_path))
    monkeypatch.setenv("OLM_PY_GO", str(tmp_path / "no-such-go"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not refbuild.go_available()
    with pytest.raises(refbuild.BuildError, match="Go toolchain was not found"):
        refbuild.ensure_reference_olm()


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ({"CI": "true", "PATH": "/bin"}, {"PATH": "/bin"}),
        ({"PATH": "/bin", "KUBECONFIG": "/elsewhere"}, {"PATH": "/bin"}),
        ({"OPERATOR_NAMESPACE": "x", "HOME": "/root"}, {"HOME": "/root"}),
    ],
)
def test_the_real_olm_runs_without_ci_in_its_namespace(
    base: dict[str, str], expected: dict[str, str]
) -> None:
    env = ref.reference_env(base, Path("/state/kubeconfig"))
    assert env == {**expected, "KUBECONFIG": "/state/kubeconfig", "OPERATOR_NAMESPACE": "olm"}


def test_the_command_lines() -> None:
    binaries = refbuild.ReferenceOlmBinaries(Path("/cache/olm"))
    assert ref.olm_operator_argv(binaries) == [
        "/cache/olm/olm",
        "--namespace",
        "olm",
        "--writeStatusName",
        "",
    ]
    tls = ref.Tls(Path("/s/tls.crt"), Path("/s/tls.key"))
    catalog = ref.catalog_operator_argv(binaries, Path("/s/kubeconfig"), tls)
    assert catalog[0] == "/cache/olm/catalog"
    pairs = dict(itertools.pairwise(catalog))  # each flag to the word after it
    assert pairs["--namespace"] == "olm" and pairs["--writeStatusName"] == ""
    assert pairs["--tls-cert"] == "/s/tls.crt" and pairs["--tls-key"] == "/s/tls.key"
    assert pairs["--client-ca"] == "/s/tls.crt"  # required once TLS is on
    assert "--kubeconfig=/s/kubeconfig" in catalog
    assert ref.opm_serve_argv(Path("/bin/opm"), Path("/cat"), 5000, Path("/s/term")) == [
        "/bin/opm",
        "serve",
        "/cat",
        "-p",
        "5000",
        "--pprof-addr=",
        "-t",
        "/s/term",
    ]


def test_the_cluster_is_prepared_as_olms_chart_does() -> None:
    objects = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in ref.chart_objects()
    }
    assert set(objects) == {
        ("Namespace", None, "olm"),
        ("Namespace", None, "operators"),
        ("OperatorGroup", "operators", "global-operators"),
    }
    assert objects["OperatorGroup", "operators", "global-operators"]["spec"] == {}


def test_the_samples_catalog_is_named_as_olm_run_names_it() -> None:
    source = ref.samples_catalog_source(5123)
    assert source["metadata"] == {"name": SAMPLES_SOURCE, "namespace": GLOBAL_NAMESPACE}
    assert source["spec"] == {
        "sourceType": "grpc",
        "address": "127.0.0.1:5123",
        "displayName": "olm-py samples",
        "publisher": "olm-py",
    }


def test_a_port_in_use_is_detected_and_explained() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert ref.port_in_use(taken.getsockname()[1])
    assert not ref.port_in_use(free_ports(1)[0])
    message = ref.busy_ports_message([8080])
    assert ":8080" in message and ":8443" in message
    assert "only one reference cluster" in message and "down" in message


def test_the_self_signed_pair_loads(tmp_path: Path) -> None:
    import ssl

    tls = ref.make_tls(tmp_path / "tls")
    ssl.create_default_context().load_cert_chain(str(tls.cert), str(tls.key))
    assert tls.key.stat().st_mode & 0o077 == 0


def _record(tmp_path: Path, **extra: Any) -> DevCluster:
    cluster = DevCluster(tmp_path)
    record = {"bin_dir": "/bin", "processes": [], "ports": {}, **extra}
    cluster.record_path.write_text(json.dumps(record))
    return cluster


def test_a_reference_cluster_says_so_and_refuses_olm_py(tmp_path: Path) -> None:
    plain = _record(tmp_path)
    assert plain.reference_olm() is None and REFERENCE_ENV not in plain.env()
    info = {"version": "v0.38.0", "processes": list(ref.PROCESSES)}
    cluster = _record(tmp_path, **{REFERENCE_KEY: info})
    assert cluster.reference_olm() == info
    assert cluster.env()[REFERENCE_ENV] == "v0.38.0"
    with pytest.raises(ClusterError, match=r"runs the real OLM v0\.38\.0.*olm-run must not run"):
        cluster.start_process("olm-run", ["/bin/true"])


def test_status_probes_the_reference_components(tmp_path: Path) -> None:
    port = free_ports(1)[0]
    checks = ref.health_checks({"samples_port": port})
    assert set(checks) == {ref.OLM_OPERATOR, ref.CATALOG_OPERATOR, ref.SAMPLES_SERVER}
    ok, detail = checks[ref.SAMPLES_SERVER]()
    assert not ok and f"127.0.0.1:{port}" in detail


def test_waiting_for_the_health_ports_ends_when_they_are_free_or_says_who_holds_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ref, "busy_health_ports", lambda: [])
    ref.wait_for_health_ports(0)  # free: returns at once
    monkeypatch.setattr(ref, "busy_health_ports", lambda: [8443])
    with pytest.raises(TimeoutError, match=r"Port :8443 \(all interfaces\) is already in use"):
        ref.wait_for_health_ports(-1)
