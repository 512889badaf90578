"""The sample memcached operator's webhooks, called for real by the kube-apiserver.

The samples catalog has three channels for memcached-operator (docs/webhooks.md, "The sample"):
`alpha` (0.0.1 -> 0.0.2), `webhooks` (... -> 0.0.3, which adds a validating webhook and installs
in any group) and `beta` (0.0.3 -> 0.1.0, which adds the v1beta1 API served through a conversion
webhook; OLM allows conversion webhooks only for CSVs that support AllNamespaces alone, so 0.1.0
is installed cluster-wide only).

1. OwnNamespace group: subscribe at 0.0.2, create Memcacheds, approve 0.0.3. The webhook
   configuration's caBundle is the CA that signed the serving certificate; a Memcached over the
   size limit is refused with the operator's own message, a valid one is accepted; the
   operands keep their UIDs; the CRD gets no conversion webhook (OLM's rule).
2. Cluster-wide in `operators`: subscribe at 0.0.3, create Memcacheds in another namespace,
   approve 0.1.0. The CRD's conversion points at the operator; an object written as v1beta1
   reads back as v1alpha1 and the other way round; the limit holds in both versions; operands
   keep their UIDs. Removing the operator leaves CRs readable (conversion back to None).
3. Certificates near expiry (olm-py's OLM_PY_CERT_* test settings): OLM renews the CA, the pods
   roll, and the webhook keeps answering with the new certificate.

The operator's pods run as real processes in network namespaces of their own (the pod network,
docs/pod-network.md); without it these stories cannot be told, so they skip.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography import x509

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.recorder import Recorder
from tests.support.stories import operator_group, phase, wait_phase

PACKAGE = "memcached-operator"
V2, V3, V4 = (f"{PACKAGE}.v{v}" for v in ("0.0.2", "0.0.3", "0.1.0"))
SERVICE = "memcached-operator-service"
CRD = "memcacheds.cache.example.com"
ALPHA, BETA = "cache.example.com/v1alpha1", "cache.example.com/v1beta1"
OPERATORS = "operators"
STARTED = "olm-py controllers started"
REFUSED = "is above this operator's limit of 10; choose 10 or fewer"


# The kube-apiserver must reach the operator's pod (tests/conftest.py `pod_network`).
pytestmark = pytest.mark.usefixtures("pod_network")


# ----- what the user types ---------------------------------------------------------------------


def subscribe(plane: ControlPlane, namespace: str, channel: str, starting_csv: str) -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": PACKAGE},
        "spec": {
            "name": PACKAGE,
            "channel": channel,
            "source": "samples",
            "sourceNamespace": "olm",
            "installPlanApproval": "Manual",
            "startingCSV": starting_csv,
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def approve_plan_for(plane: ControlPlane, namespace: str, csv: str) -> None:
    def plan() -> dict[str, Any] | None:
        items = plane.get_json("installplan.operators.coreos.com", "-n", namespace)["items"]
        return next((p for p in items if csv in p["spec"]["clusterServiceVersionNames"]), None)

    found = wait_for(plan, timeout=STEP_TIMEOUT, what=f"an InstallPlan for {csv}")
    plane.kubectl(
        "patch",
        "installplan.operators.coreos.com",
        found["metadata"]["name"],
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"approved":true}}',
    )


def memcached(name: str, size: int, api: str = ALPHA, **labels: str) -> dict[str, Any]:
    field = "size" if api == ALPHA else "replicas"
    return {
        "apiVersion": api,
        "kind": "Memcached",
        "metadata": {"name": name, "labels": labels},
        "spec": {field: size},
    }


def kubectl_apply(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> tuple[bool, str]:
    result = plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(obj), check=False)
    return result.returncode == 0, result.stderr.strip()


def get(plane: ControlPlane, namespace: str, name: str, api: str = ALPHA) -> dict[str, Any]:
    version = api.split("/")[1]
    found: dict[str, Any] = plane.get_json(
        f"memcacheds.{version}.cache.example.com", name, "-n", namespace
    )
    return found


def uids(plane: ControlPlane, namespace: str, names: list[str]) -> dict[str, str]:
    found = {}
    for name in names:
        found[f"memcached/{name}"] = get(plane, namespace, name)["metadata"]["uid"]
        deployment = plane.get_json("deployment", name, "-n", namespace)
        found[f"deployment/{name}"] = deployment["metadata"]["uid"]
    return found


def csv_state(plane: ControlPlane, namespace: str, name: str) -> str:
    result = plane.kubectl(
        "get",
        "csv",
        name,
        "-n",
        namespace,
        "-o",
        "jsonpath={.status.phase}/{.status.reason}: {.status.message}",
        check=False,
    )
    return result.stdout if result.returncode == 0 else "absent"


def wait_upgraded(plane: ControlPlane, namespace: str, old: str, new: str) -> None:
    try:
        wait_for(
            lambda: (
                phase(plane, namespace, new) == "Succeeded/InstallSucceeded"
                and phase(plane, namespace, old) == "absent"
            ),
            timeout=STEP_TIMEOUT,
            what=f"{new} Succeeded and {old} gone",
        )
    except AssertionError as exc:
        states = {csv: csv_state(plane, namespace, csv) for csv in (old, new)}
        log = operator_log(plane, namespace)[-2000:]
        raise AssertionError(f"{exc}\n{states}\noperator log:\n{log}") from None


def operator_log(plane: ControlPlane, namespace: str) -> str:
    """The operator processes' own logs (what the pod runner recorded for the namespace)."""
    pods = plane.cluster.state_dir / "pods"
    return "".join(
        p.read_text() for p in sorted(pods.glob(f"{namespace}_memcached-operator-*/*.log"))
    )


def wait_reconciled(
    plane: ControlPlane, namespace: str, name: str, version: str, operator_namespace: str = ""
) -> None:
    def done() -> bool:
        status = get(plane, namespace, name).get("status") or {}
        return status.get("reconciledBy") == version

    try:
        wait_for(done, timeout=STEP_TIMEOUT, what=f"{name} reconciled by {version}")
    except AssertionError as exc:
        log = operator_log(plane, operator_namespace or namespace)[-3000:]
        raise AssertionError(f"{exc}\noperator log:\n{log}") from None


def accepted(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> None:
    """Applied, once the webhooks answer (a refusal is a failure at once)."""

    def attempt() -> bool | None:
        applied, error = kubectl_apply(plane, namespace, obj)
        if applied:
            return True
        if "failed calling webhook" in error or "conversion webhook" in error:
            return None  # not answering yet (a pod starting or rolling)
        raise AssertionError(f"{obj['metadata']['name']} was refused: {error}")

    wait_for(attempt, timeout=STEP_TIMEOUT, what=f"{obj['metadata']['name']} accepted")


def webhook_refuses(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> str | None:
    """The refusal, once the webhook answers (until then the API server reports a call error)."""
    applied, error = kubectl_apply(plane, namespace, obj)
    assert not applied, f"{obj['metadata']['name']} over the limit was accepted"
    return error if REFUSED in error else None


# ----- what the user checks --------------------------------------------------------------------


def serving_ca(plane: ControlPlane, namespace: str) -> tuple[bytes, x509.Certificate]:
    """The CA (olmCAKey) and the serving certificate of the operator's Secret."""
    secret = plane.get_json("secret", f"{SERVICE}-cert", "-n", namespace)
    ca = base64.b64decode(secret["data"]["olmCAKey"])
    serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    return ca, serving


def validating_configuration(plane: ControlPlane, csv: str, namespace: str) -> dict[str, Any]:
    selector = f"olm.owner={csv},olm.owner.namespace={namespace}"
    found = wait_for(
        lambda: plane.get_json("validatingwebhookconfiguration", "-l", selector)["items"],
        timeout=60,
        what=f"the ValidatingWebhookConfiguration of {csv}",
    )
    [config] = found
    result: dict[str, Any] = config
    return result


def assert_valid_ca_bundle(plane: ControlPlane, namespace: str, bundle: str) -> bytes:
    ca_pem, serving = serving_ca(plane, namespace)
    assert base64.b64decode(bundle) == ca_pem, "caBundle is the CA of the operator's Secret"
    ca = x509.load_pem_x509_certificate(ca_pem)
    serving.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{SERVICE}.{namespace}.svc" in names.get_values_for_type(x509.DNSName)
    return ca_pem


def conversion(plane: ControlPlane) -> dict[str, Any]:
    found: dict[str, Any] = plane.get_json("crd", CRD)["spec"].get("conversion") or {}
    return found


# ----- 1. OwnNamespace -------------------------------------------------------------------------


def test_an_own_namespace_operator_upgrades_to_its_validating_webhook(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "webhooks", V2)
    approve_plan_for(plane, namespace, V2)
    wait_phase(plane, namespace, V2, "Succeeded/InstallSucceeded")

    # Operands of 0.0.2, one of them above the limit 0.0.3 will have.
    for obj in (memcached("cache-a", 2), memcached("cache-big", 12)):
        assert kubectl_apply(plane, namespace, obj)[0]
    for name in ("cache-a", "cache-big"):
        wait_reconciled(plane, namespace, name, "0.0.2")
    before = uids(plane, namespace, ["cache-a", "cache-big"])

    approve_plan_for(plane, namespace, V3)
    wait_upgraded(plane, namespace, V2, V3)

    config = validating_configuration(plane, V3, namespace)
    assert config["metadata"]["name"].startswith("vmemcached.cache.example.com-")
    [hook] = config["webhooks"]
    assert hook["clientConfig"]["service"] == {
        "name": SERVICE,
        "namespace": namespace,
        "path": "/validate",
        "port": 443,
    }
    group = plane.get_json("operatorgroup", "og", "-n", namespace)
    assert hook["namespaceSelector"] == {
        "matchLabels": {f"olm.operatorgroup.uid/{group['metadata']['uid']}": ""}
    }
    assert_valid_ca_bundle(plane, namespace, hook["clientConfig"]["caBundle"])

    # The webhook answers with its own message; a valid Memcached is accepted.
    refusal = wait_for(
        lambda: webhook_refuses(plane, namespace, memcached("cache-huge", 11)),
        timeout=STEP_TIMEOUT,
        what="the webhook's refusal of size 11",
    )
    assert 'admission webhook "vmemcached.cache.example.com" denied the request' in refusal
    assert "spec.size 11 is above this operator's limit of 10" in refusal
    accepted(plane, namespace, memcached("cache-c", 4))
    wait_reconciled(plane, namespace, "cache-c", "0.0.3")
    # Growing an existing one past the limit is refused; an older one above it stays usable.
    applied, error = kubectl_apply(plane, namespace, memcached("cache-a", 20))
    assert not applied and "spec.size 20 is above" in error
    accepted(plane, namespace, memcached("cache-big", 12, tier="legacy"))

    # Operands untouched by the upgrade, now reconciled by 0.0.3.
    assert uids(plane, namespace, ["cache-a", "cache-big"]) == before
    wait_reconciled(plane, namespace, "cache-a", "0.0.3")
    # No conversion webhook for an operator that is not cluster-wide (OLM's rule).
    assert conversion(plane).get("strategy", "None") == "None"


# ----- 2. cluster-wide, with the conversion webhook --------------------------------------------


def uninstall_cluster_wide(plane: ControlPlane, namespace: str) -> None:
    """What the admin does to remove the operator from `operators` (and the operands first)."""
    plane.kubectl("delete", "memcacheds", "--all", "-n", namespace, "--timeout=60s", check=False)
    plane.kubectl(
        "delete",
        "subscription.operators.coreos.com",
        PACKAGE,
        "-n",
        OPERATORS,
        "--ignore-not-found",
    )
    for csv in (V4, V3):
        plane.kubectl(
            "delete",
            "csv",
            csv,
            "-n",
            OPERATORS,
            "--ignore-not-found",
            "--timeout=90s",
            check=False,
        )
    for plan in plane.get_json("installplan.operators.coreos.com", "-n", OPERATORS)["items"]:
        if any(c.startswith(PACKAGE) for c in plan["spec"]["clusterServiceVersionNames"]):
            plane.kubectl(
                "delete",
                "installplan.operators.coreos.com",
                plan["metadata"]["name"],
                "-n",
                OPERATORS,
                "--ignore-not-found",
            )
    wait_for(
        lambda: (
            not plane.get_json(
                "validatingwebhookconfiguration", "-l", f"olm.owner.namespace={OPERATORS}"
            )["items"]
            and conversion(plane).get("strategy", "None") == "None"
        ),
        timeout=STEP_TIMEOUT,
        what="the webhook configuration removed and the CRD's conversion back to None",
    )


@pytest.fixture
def cluster_wide(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> Iterator[None]:
    try:
        yield
    finally:
        uninstall_cluster_wide(control_plane, namespace)


def test_a_cluster_wide_operator_converts_between_api_versions(
    control_plane: ControlPlane, namespace: str, cluster_wide: None
) -> None:
    plane = control_plane
    subscribe(plane, OPERATORS, "beta", V3)
    approve_plan_for(plane, OPERATORS, V3)
    wait_phase(plane, OPERATORS, V3, "Succeeded/InstallSucceeded")
    hook = validating_configuration(plane, V3, OPERATORS)["webhooks"][0]
    assert hook["namespaceSelector"] == {}  # every namespace

    # Operands written as v1alpha1 by the user, in a namespace of their own.
    wait_for(
        lambda: webhook_refuses(plane, namespace, memcached("cache-huge", 11)),
        timeout=STEP_TIMEOUT,
        what="0.0.3's refusal of size 11",
    )
    accepted(plane, namespace, memcached("cache-a", 2))
    wait_reconciled(plane, namespace, "cache-a", "0.0.3", OPERATORS)
    before = uids(plane, namespace, ["cache-a"])

    approve_plan_for(plane, OPERATORS, V4)
    wait_upgraded(plane, OPERATORS, V3, V4)
    crd = plane.get_json("crd", CRD)
    served = {v["name"]: (v["served"], v["storage"]) for v in crd["spec"]["versions"]}
    assert served == {"v1alpha1": (True, True), "v1beta1": (True, False)}
    webhook = conversion(plane)
    assert webhook["strategy"] == "Webhook"
    assert webhook["webhook"]["clientConfig"]["service"] == {
        "name": SERVICE,
        "namespace": OPERATORS,
        "path": "/convert",
        "port": 443,
    }
    assert webhook["webhook"]["conversionReviewVersions"] == ["v1"]
    ca = assert_valid_ca_bundle(plane, OPERATORS, webhook["webhook"]["clientConfig"]["caBundle"])
    hook = validating_configuration(plane, V4, OPERATORS)["webhooks"][0]
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca

    # Written as v1alpha1, read as v1beta1 (through the conversion webhook), and back.
    def as_beta() -> dict[str, Any] | None:
        result = plane.kubectl(
            "get",
            "memcacheds.v1beta1.cache.example.com",
            "cache-a",
            "-n",
            namespace,
            "-o",
            "json",
            check=False,
        )
        return json.loads(result.stdout) if result.returncode == 0 else None

    beta = wait_for(as_beta, timeout=STEP_TIMEOUT, what="cache-a read as v1beta1")
    assert beta["apiVersion"] == BETA and beta["spec"] == {"replicas": 2}
    assert beta["status"]["nodes"] == get(plane, namespace, "cache-a")["status"]["nodes"]
    accepted(plane, namespace, memcached("cache-b", 3, BETA))
    alpha = get(plane, namespace, "cache-b")
    assert alpha["apiVersion"] == ALPHA and alpha["spec"] == {"size": 3}
    assert get(plane, namespace, "cache-b", BETA)["spec"] == {"replicas": 3}
    wait_reconciled(plane, namespace, "cache-b", "0.1.0", OPERATORS)

    # The limit holds in either version, with the field the user wrote.
    applied, error = kubectl_apply(plane, namespace, memcached("cache-huge", 12, BETA))
    assert not applied and "spec.replicas 12 is above this operator's limit of 10" in error
    applied, error = kubectl_apply(plane, namespace, memcached("cache-huge", 13))
    assert not applied and "spec.size 13 is above" in error

    assert uids(plane, namespace, ["cache-a"]) == before
    wait_reconciled(plane, namespace, "cache-a", "0.1.0", OPERATORS)


# ----- 3. certificate rotation -----------------------------------------------------------------


@pytest.fixture
def short_certificates(
    olm_operator: OlmOperator, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """olm-py restarted with certificates valid 100 s, renewed 50 s before they end."""

    def restart() -> None:
        olm_operator.stop()
        started = olm_operator.log_path.read_text(errors="replace").count(STARTED)
        olm_operator.start()
        wait_for(
            lambda: olm_operator.log_path.read_text(errors="replace").count(STARTED) > started,
            timeout=STEP_TIMEOUT,
            what="olm run started again",
        )

    monkeypatch.setenv("OLM_PY_CERT_VALIDITY_SECONDS", "100")
    monkeypatch.setenv("OLM_PY_CERT_ROTATE_BEFORE_SECONDS", "50")
    restart()
    try:
        yield
    finally:
        monkeypatch.delenv("OLM_PY_CERT_VALIDITY_SECONDS")
        monkeypatch.delenv("OLM_PY_CERT_ROTATE_BEFORE_SECONDS")
        restart()


def test_a_certificate_near_expiry_is_renewed_and_the_webhook_keeps_answering(
    control_plane: ControlPlane, namespace: str, short_certificates: None
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    # Watching from before the CSV exists: on a loaded machine the renewal (about 50 s after
    # the certificate is made, during the install) may come before the checks below are done.
    recorder = Recorder(plane, namespace)
    try:
        subscribe(plane, namespace, "webhooks", V3)
        approve_plan_for(plane, namespace, V3)
        csv = wait_phase(plane, namespace, V3, "Succeeded/InstallSucceeded")
        recorder.wait_until_watching(V3)
        first_updated = csv["status"]["certsLastUpdated"]
        hook = validating_configuration(plane, V3, namespace)["webhooks"][0]
        first_ca = assert_valid_ca_bundle(plane, namespace, hook["clientConfig"]["caBundle"])
        wait_for(
            lambda: webhook_refuses(plane, namespace, memcached("cache-huge", 11)),
            timeout=STEP_TIMEOUT,
            what="the webhook's refusal before the renewal",
        )

        # About 50 s after the install the certificate enters its renewal window: a new CA.
        def renewed() -> bytes | None:
            current = validating_configuration(plane, V3, namespace)["webhooks"][0]
            bundle = base64.b64decode(current["clientConfig"]["caBundle"])
            return bundle if bundle != first_ca else None

        wait_for(renewed, timeout=STEP_TIMEOUT, interval=2, what="the caBundle renewed")
        csv = wait_phase(plane, namespace, V3, "Succeeded/InstallSucceeded")
        phases = recorder.phases(V3)
    finally:
        recorder.close()
    assert "Pending/NeedsCertRotation" in phases, phases
    assert csv["status"]["certsLastUpdated"] != first_updated
    hook = validating_configuration(plane, V3, namespace)["webhooks"][0]
    new_ca = assert_valid_ca_bundle(plane, namespace, hook["clientConfig"]["caBundle"])
    assert new_ca != first_ca
    deployment = plane.get_json("deployment", "memcached-operator", "-n", namespace)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["olmcahash"] != hashlib.sha256(first_ca).hexdigest()

    # The pods rolled onto the new certificate: the webhook answers again.
    refusal = wait_for(
        lambda: webhook_refuses(plane, namespace, memcached("cache-huge", 11)),
        timeout=STEP_TIMEOUT,
        what="the webhook's refusal after the renewal",
    )
    assert "spec.size 11" in refusal
    accepted(plane, namespace, memcached("cache-a", 1))
