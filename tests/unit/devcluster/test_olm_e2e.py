"""How OLM's e2e suite is built and run against olm-py (olm/devcluster/olm_e2e.py): the pure
parts, on plain data."""

from __future__ import annotations

from pathlib import Path

from olm.devcluster import olm_e2e

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1">
  <testsuite name="End-to-end" tests="4" failures="1">
    <testcase name="[BeforeSuite]" time="3.5"></testcase>
    <testcase name="[It] Operator Group e2e tests should be created" time="12.25"></testcase>
    <testcase name="[It] CSV should fail" time="1">
      <failure message="Expected success" type="failed">Timed out after 300s</failure>
    </testcase>
    <testcase name="[It] Subscription not selected" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] Something pending" time="0">
      <skipped message="skipped - Spec is pending"></skipped>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_the_suite_runs_with_olms_flags_against_olm_namespaces() -> None:
    binary = Path("/cache/olm-e2e-v0.38.0/olm-e2e.test")
    argv = olm_e2e.suite_argv(
        binary, Path("/k/kubeconfig"), Path("/o/junit.xml"), focus="OperatorGroup", budget="5m"
    )
    assert argv[0] == str(binary)
    assert "-namespace=operators" in argv and "-olmNamespace=olm" in argv
    assert "-catalogNamespace=olm" in argv
    assert "-test-data-dir=/cache/olm-e2e-v0.38.0/testdata" in argv
    assert "-ginkgo.focus=OperatorGroup" in argv and "-ginkgo.timeout=5m" in argv
    assert "-ginkgo.junit-report=/o/junit.xml" in argv
    # Only the specs never run here are skipped (the one that dials outside this machine).
    assert "-ginkgo.skip=(?:Global Catalog Exclusion)" in argv
    mine = olm_e2e.suite_argv(binary, Path("/k"), Path("/o"), skip="a|b")
    # A full run also skips the specs that wait for ever when olm-py fails them (none now).
    assert "-ginkgo.skip=(?:Global Catalog Exclusion)|(?:a|b)" in mine


def test_the_build_compiles_the_test_package_of_the_pinned_module(tmp_path: Path) -> None:
    get, download, compile_ = olm_e2e.go_args(tmp_path, "v0.38.0")
    assert get == ["get", "github.com/operator-framework/operator-lifecycle-manager@v0.38.0"]
    assert download[-1] == get[-1]
    assert compile_[:2] == ["test", "-c"] and compile_[-1].endswith("/test/e2e")
    assert olm_e2e.suite_inputs()["tags"] == "json1"


def test_the_junit_report_is_read_spec_by_spec() -> None:
    outcomes = olm_e2e.read_junit(JUNIT)
    states = {o.name: o.state for o in outcomes}
    assert states["[It] Operator Group e2e tests should be created"] == "passed"
    assert states["[It] CSV should fail"] == "failed"
    assert states["[It] Subscription not selected"] == "skipped"
    assert states["[It] Something pending"] == "pending"
    failed = next(o for o in outcomes if o.state == "failed")
    assert failed.message == "Expected success" and failed.seconds == 1.0
    assert olm_e2e.summary(outcomes) == (
        "olm-py passes 1 of 2 specs run (1 skipped or not selected, 1 pending)"
    )


def test_the_default_catalog_is_the_one_the_before_suite_waits_for() -> None:
    catalog = olm_e2e.default_catalog("127.0.0.1:5000/olm-py/samples-catalog:latest")
    assert catalog["metadata"] == {"name": "operatorhubio-catalog", "namespace": "olm"}
    assert catalog["spec"]["image"] == "127.0.0.1:5000/olm-py/samples-catalog:latest"  # type: ignore[index]


def test_each_shard_runs_its_spec_files_and_every_file_is_in_one_shard() -> None:
    argv = olm_e2e.suite_argv(
        Path("/c/olm-e2e.test"), Path("/k"), Path("/r.xml"), files=olm_e2e.SHARDS[0]
    )
    assert "-ginkgo.focus-file=/subscription(_e2e)?_test\\.go$" in argv
    names = [name for shard in olm_e2e.SHARDS for name in shard]
    assert len(names) == len(set(names)) == 23, "OLM v0.38's 23 spec files, each once"


def test_the_olm_under_test_is_recorded_as_the_deployment_the_suite_reads() -> None:
    record = olm_e2e.olm_deployment_record(["run", "--protectedCopiedCSVNamespaces", "x"])
    assert record["metadata"] == {
        "name": "olm-operator",
        "namespace": "olm",
        "labels": {"app": "olm-operator"},
    }
    spec = record["spec"]
    assert isinstance(spec, dict) and spec["replicas"] == 0, "nothing runs from it"
    (container,) = spec["template"]["spec"]["containers"]
    assert container["name"] == "olm-operator"
    assert container["args"] == ["run", "--protectedCopiedCSVNamespaces", "x"]


def test_the_reference_olms_default_catalog_is_an_address() -> None:
    spec = olm_e2e.default_catalog_at("127.0.0.1:5")["spec"]
    assert isinstance(spec, dict) and spec["address"] == "127.0.0.1:5" and "image" not in spec
