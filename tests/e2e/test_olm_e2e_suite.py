"""A fast subset of OLM v0.38's own e2e suite (olm-e2e.test, built by `make olm-e2e-suite`),
run against olm-py on the test cluster as OLM's CI runs it against OLM: the suite's
BeforeSuite finds the default catalog synced (a registryService and a READY connection,
docs/catalogs.md), then the chosen specs run unchanged. The whole suite is `make olm-e2e`
(docs/olm-e2e.md); these ten specs are chosen for coverage and speed (about a minute
together): OperatorGroup status and namespaces, install modes, static provided APIs, a scoped
OperatorGroup whose service account gets its rights late, a copied CSV given a wrong
olm.operatorNamespace by hand; a Subscription to a ConfigMap catalog whose CSVs have no API
group, Manual approval and its condition, a dependency subscribed to by the plan; InstallPlans
made and written by hand (a step updating a Service, a step whose CSV owner appears later)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from olm.devcluster import olm_e2e, registry
from olm.progress import Progress
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator

FAST_SUBSET = (
    "Operator Group e2e functionality",
    "Operator Group install mode support",
    "Operator Group static provider",
    "Operator Group insufficient permissions resolve via RBAC",
    "Operator Group cleanup csvs with bad namespace annotation",
    "Subscription creation if not installed",
    "Subscription creation manual approval",
    "should create a Subscription for the latest entry providing the required GVK",
    "when a ClusterIP service exists it can be updated by an InstallPlan step",
    "succeeds if there is no error on a later attempt",
)


def test_a_fast_subset_of_olms_own_e2e_suite_passes(
    control_plane: ControlPlane, olm_operator: OlmOperator, pod_network: None, tmp_path: Path
) -> None:
    plane = control_plane
    binary = olm_e2e.ensure_suite(Progress())
    image = plane.cluster.env().get(registry.SAMPLES_IMAGE_ENV)
    assert image, "olm dev up published no samples image (olm dev status)"
    catalog = olm_e2e.default_catalog(image)
    plane.kubectl("apply", "-f", "-", stdin=json.dumps(catalog))
    name = ("catsrc", olm_e2e.DEFAULT_CATALOG, "-n", olm_e2e.OLM_NAMESPACE)
    try:
        wait_for(
            lambda: (plane.get_json(*name).get("status") or {}).get("registryService"),
            timeout=STEP_TIMEOUT,
            what="the suite's default catalog to be synced",
        )
        report = tmp_path / "junit.xml"
        focus = "|".join(FAST_SUBSET)
        argv = olm_e2e.suite_argv(
            binary, plane.kubeconfig, report, focus=focus, budget="15m", extra=["-ginkgo.no-color"]
        )
        run = subprocess.run(
            argv, capture_output=True, text=True, env=plane.env(), cwd=binary.parent, timeout=1200
        )
        assert report.is_file(), run.stdout[-4000:] + run.stderr[-2000:]
        outcomes = olm_e2e.specs(olm_e2e.read_junit(report.read_text()))
        ran = {o.name: o for o in outcomes if o.state in ("passed", "failed")}
        print(olm_e2e.summary(outcomes))
        for wanted in FAST_SUBSET:
            found = [o for n, o in ran.items() if wanted in n]
            assert found, f"{wanted!r} did not run:\n{run.stdout[-3000:]}"
            failed = [o for o in found if o.state != "passed"]
            assert not failed, f"{wanted!r} failed: {failed[0].message}\n{run.stdout[-6000:]}"
    finally:
        plane.kubectl("delete", *name, "--ignore-not-found", check=False)
