"""`olm.webhook-description-hash` is OLM's: DeepHashObject of the WebhookDescription as OLM
stores it (its CRD defaults containerPort to 443). The expected values are the labels OLM
v0.38 wrote on the webhook configurations of gingersnap 0.0.1 (six) and
jupyter-notebook-validator-operator 1.0.8 (two) in the corpus parity run
(docs/parity-corpus.md)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from olm.install.webhooks import description_hash, go_description
from tests.support.paths import SHARED

OPERATORS = SHARED / "corpus/community-operators/operators"
GINGERSNAP = OPERATORS / "gingersnap/0.0.1/manifests/gingersnap.clusterserviceversion.yaml"
JUPYTER = (
    OPERATORS
    / "jupyter-notebook-validator-operator/1.0.8/manifests"
    / "jupyter-notebook-validator-operator.clusterserviceversion.yaml"
)
OLM_V0_38_LABELS = {
    "mnotebookvalidationjob.kb.io": "cKp0AqCBpnFWwbLIIb6a1MEX46v9pXNVjI9hav",
    "vnotebookvalidationjob.kb.io": "pqDxF3G1hrUWIdxPhYs6fAmcp9jq10ZPKCwbC",
    "mcache.kb.io": "2UB5frQ0qf25YemfuxhlH7zL0ZiSPVXbuel2LG",
    "meagercacherule.kb.io": "9aFZQSuYByf1K0t2gtb5520CarisKeqULaCF0b",
    "mlazycacherule.gingersnap-project.io": "7Tj9GqGXXwSmtSxq2GCi9BBoOpFWNFWlAhS566",
    "vcache.kb.io": "5aZZm5Qq1tuFuqeV23dFyqvz9wNzY50vErR1OA",
    "veagercacherule.kb.io": "7P0TmTqDHmSTN5Fdusx2mUVJacv8rPICJcyG7e",
    "vlazycacherule.gingersnap-project.io": "7bPI24N54DQexOpuTIqqGiYZ7b1KpfhbEim9Rk",
}


def definitions() -> dict[str, dict[str, Any]]:
    out = {}
    for path in (GINGERSNAP, JUPYTER):
        csv = yaml.safe_load(path.read_text())
        out.update({d["generateName"]: d for d in csv["spec"]["webhookdefinitions"]})
    return out


@pytest.mark.parametrize(("name", "label"), sorted(OLM_V0_38_LABELS.items()))
def test_the_hash_is_the_one_olm_writes(name: str, label: str) -> None:
    assert description_hash(definitions()[name]) == label


def test_an_absent_container_port_hashes_as_olms_default() -> None:
    definition = dict(definitions()["vcache.kb.io"])
    definition.pop("containerPort", None)
    assert go_description(definition)["containerPort"] == 443
    assert description_hash(definition) == description_hash({**definition, "containerPort": 443})


def test_go_layout_orders_fields_and_keeps_the_non_omitempty_ones() -> None:
    laid = go_description(
        {
            "webhookPath": "/v",
            "type": "ValidatingAdmissionWebhook",
            "generateName": "v.example.com",
            "rules": [{"resources": ["things"], "operations": ["CREATE"], "apiGroups": [""]}],
            "objectSelector": {"matchLabels": {"z": "1", "a": "2"}},
        }
    )
    assert list(laid) == [
        "generateName",
        "type",
        "containerPort",
        "rules",
        "objectSelector",
        "sideEffects",
        "admissionReviewVersions",
        "webhookPath",
    ]
    assert laid["sideEffects"] is None and laid["admissionReviewVersions"] is None
    assert list(laid["rules"][0]) == ["operations", "apiGroups", "resources"]
    assert list(laid["objectSelector"]["matchLabels"]) == ["a", "z"]
