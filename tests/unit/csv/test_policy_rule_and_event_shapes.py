"""Two wire shapes OLM v0.38 gets from Go: a PolicyRule in a requirementStatus message is
Go's json.Marshal of rbac/v1 PolicyRule (field order, omitempty, HTML escaping), and an
Event about a cluster-scoped object is stored in `default` with no involvedObject.namespace
(Kubernetes' event recorder)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.requirements import policy_rule_json
from olm.kube.events import event_body


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {"resources": ["pods"], "apiGroups": [""], "verbs": ["get", "list"]},
            '{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]}',
        ),
        (
            {
                "nonResourceURLs": ["/metrics"],
                "resourceNames": ["x"],
                "resources": ["r"],
                "apiGroups": ["g"],
                "verbs": ["*"],
            },
            '{"verbs":["*"],"apiGroups":["g"],"resources":["r"],"resourceNames":["x"],'
            '"nonResourceURLs":["/metrics"]}',
        ),
        # omitempty: empty lists are left out; verbs is always written; unknown keys dropped
        ({"verbs": ["get"], "apiGroups": [], "resourceNames": [], "extra": 1}, '{"verbs":["get"]}'),
        ({"resources": ["pods"]}, '{"verbs":null,"resources":["pods"]}'),
        # Go escapes <, > and & and keeps other non-ASCII characters
        ({"verbs": ["<a>&é"]}, '{"verbs":["\\u003ca\\u003e\\u0026é"]}'),
    ],
)
def test_policy_rules_print_as_go_does(rule: dict[str, Any], expected: str) -> None:
    assert policy_rule_json(rule) == expected


NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    # a caller may pass the namespace's own name as metadata.namespace: still cluster-scoped
    "metadata": {"name": "team", "namespace": "team", "uid": "u1", "resourceVersion": "3"},
}
CSV = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "op.v1", "namespace": "team", "uid": "u2", "resourceVersion": "9"},
}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "a.b.c", "uid": "u3"},
}


@pytest.mark.parametrize(
    ("involved", "stored_in", "involved_namespace"),
    [(NAMESPACE, "default", None), (CRD, "default", None), (CSV, "team", "team")],
)
def test_events_of_cluster_scoped_objects_go_to_default(
    involved: dict[str, Any], stored_in: str, involved_namespace: str | None
) -> None:
    body = event_body(involved, "Normal", "R", "m", "2026-11-23T00:00:00Z")
    assert body["metadata"]["namespace"] == stored_in
    assert body["involvedObject"]["namespace"] == involved_namespace
    assert body["involvedObject"]["name"] == involved["metadata"]["name"]
