"""What a CatalogSource's spec asks to read, poll intervals, and failure sentences."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.catalogsource import (
    CatalogSourceReason,
    ConnectionState,
    SecurityConfig,
    SourceType,
)
from olm.catalogsource.failures import (
    Failure,
    FailureKind,
    failure_message,
    grpc_failure,
    reason_for,
)
from olm.catalogsource.source import (
    DEFAULT_POLL_SECONDS,
    ReadConfigMap,
    ReadImage,
    ReadRegistry,
    SpecInvalid,
    parse_duration,
    poll_seconds,
    what_to_read,
)

# operator-framework/api v1alpha1/catalogsource_types.go (olm-behaviour.md §1.4).
OLM_SOURCE_TYPES = {"grpc", "configmap", "internal"}
OLM_REASONS = {"SpecInvalidError", "ConfigMapError", "RegistryServerError", "InvalidIntervalError"}
GRPC_STATES = {"IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE", "SHUTDOWN"}


def test_vocabularies_are_olms() -> None:
    assert {t.value for t in SourceType} == OLM_SOURCE_TYPES
    assert {r.value for r in CatalogSourceReason} == OLM_REASONS
    assert {s.value for s in ConnectionState} == GRPC_STATES
    assert {s.value for s in SecurityConfig} == {"legacy", "restricted"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"sourceType": "grpc", "address": "127.0.0.1:50051"}, ReadRegistry("127.0.0.1:50051")),
        ({"sourceType": "grpc", "address": " h:1 ", "image": "x"}, ReadRegistry("h:1")),
        ({"sourceType": "grpc", "image": " quay.io/x:1 "}, ReadImage("quay.io/x:1")),
        (
            {"sourceType": "grpc", "image": "quay.io/x:1", "secrets": ["pull", "", 3, " b "]},
            ReadImage("quay.io/x:1", ("pull", "b")),
        ),
        (
            {"sourceType": "grpc", "image": "quay.io/x:1", "grpcPodConfig": {"memoryTarget": "1"}},
            ReadImage("quay.io/x:1"),
        ),
        ({"sourceType": "configmap", "configMap": "cm"}, ReadConfigMap("cm")),
        ({"sourceType": "internal", "configMap": "cm"}, ReadConfigMap("cm")),
    ],
)
def test_what_to_read(spec: dict[str, Any], expected: object) -> None:
    assert what_to_read({"spec": spec}) == expected


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        (
            {"sourceType": "grpc", "image": ["quay.io/x/catalog:1"]},
            ["spec.image ['quay.io/x/catalog:1'] is not a string", "registry.example.com"],
        ),
        (
            {"sourceType": "grpc"},
            ["image and address unset: at least one must be set for sourcetype: grpc"],
        ),
        ({"sourceType": "grpc", "address": "   "}, ["image and address unset"]),
        (
            {"sourceType": "configmap"},
            ["configmap name unset: must be set for sourcetype: configmap", "spec.configMap"],
        ),
        ({"sourceType": "internal", "configMap": ""}, ["sourcetype: internal"]),
        (
            {"sourceType": "helm-repo"},
            ["spec.sourceType 'helm-repo' is not one of grpc, configmap, internal"],
        ),
        ({}, ["spec.sourceType (empty)"]),
    ],
)
def test_invalid_specs_are_sentences(spec: dict[str, Any], fragments: list[str]) -> None:
    read = what_to_read({"spec": spec})
    assert isinstance(read, SpecInvalid)
    for fragment in fragments:
        assert fragment in read.message


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("10m", 600.0),
        ("1h30m", 5400.0),
        ("1.5m", 90.0),
        ("300ms", 0.3),
        ("2h45m30.5s", 9930.5),
        ("0", 0.0),
        ("-1s", -1.0),
        ("10", None),
        ("ten minutes", None),
        ("1d", None),
        ("", None),
        ("s", None),
        ("1m x", None),
    ],
)
def test_go_durations(text: str, seconds: float | None) -> None:
    result = parse_duration(text)
    if seconds is None:
        assert result is None
    else:
        assert result == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("interval", "seconds", "problem"),
    [
        (None, DEFAULT_POLL_SECONDS, ""),
        ("2s", 2.0, ""),
        ("300ms", 1.0, ""),
        ("15m", 900.0, ""),
        ("fast", DEFAULT_POLL_SECONDS, "'fast' is not a duration like 30s or 10m; using 30s"),
        ("0s", DEFAULT_POLL_SECONDS, "must be longer than 0"),
    ],
)
def test_poll_seconds(interval: str | None, seconds: float, problem: str) -> None:
    spec = {"updateStrategy": {"registryPoll": {"interval": interval}}}
    got, said = poll_seconds(spec)
    assert got == seconds
    assert (problem in said) if problem else said == ""
    if problem:
        assert said.startswith("spec.updateStrategy.registryPoll.interval")


# ----- failures --------------------------------------------------------------------------------

REFUSED = (
    "<_MultiThreadedRendezvous of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n"
    '\tdetails = "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: '
    'Failed to connect to remote host: Connection refused"'
)


@pytest.mark.parametrize(
    ("failure", "fragments"),
    [
        (
            grpc_failure("UNAVAILABLE", "failed to connect", REFUSED),
            [
                "cannot connect to the catalog at 127.0.0.1:1: nothing is listening there",
                "spec.address",
            ],
        ),
        (
            grpc_failure("UNAVAILABLE", "", "errors resolving nowhere.invalid: lookup failed"),
            ["its host name does not resolve"],
        ),
        (
            grpc_failure("UNAVAILABLE", "", "Failed parsing HTTP/2"),
            ["does not speak gRPC"],
        ),
        (
            grpc_failure("UNAVAILABLE", "", "something else"),
            ["cannot connect to the catalog at 127.0.0.1:1. Check"],
        ),
        (
            grpc_failure("DEADLINE_EXCEEDED", "Deadline Exceeded", "", 10.0),
            ["did not answer within 10s"],
        ),
        (
            grpc_failure("UNIMPLEMENTED", "Method not found!", ""),
            ["does not serve the operator-registry API"],
        ),
        (
            grpc_failure("INTERNAL", "error loading bundles", ""),
            ['answered with an error (INTERNAL: "error loading bundles")', "registry server's log"],
        ),
        (grpc_failure("INTERNAL", "", ""), ["answered with an error (INTERNAL)."]),
        (
            Failure(FailureKind.UNREADABLE, detail="KeyError('packageName')"),
            ["cannot read as a catalog", "opm validate"],
        ),
    ],
)
def test_registry_failures_are_sentences(failure: Failure, fragments: list[str]) -> None:
    message = failure_message("ns", "src", "127.0.0.1:1", failure)
    assert message.startswith("CatalogSource ns/src")
    for fragment in fragments:
        assert fragment in message
    for raw in ("_MultiThreadedRendezvous", "StatusCode", "KeyError", "debug_error_string"):
        assert raw not in message
    assert reason_for(failure) == CatalogSourceReason.REGISTRY_SERVER_ERROR


def test_server_messages_are_shortened() -> None:
    message = failure_message("ns", "src", "h:1", grpc_failure("INTERNAL", "x" * 500, ""))
    assert "x" * 197 + "..." in message and "x" * 198 not in message


@pytest.mark.parametrize(
    ("failure", "fragments"),
    [
        (
            Failure(FailureKind.CONFIGMAP_MISSING),
            ['ConfigMap "cm" named by spec.configMap does not exist in namespace ns', "Create it"],
        ),
        (
            Failure(FailureKind.CONFIGMAP_INVALID, summary="cannot parse ConfigMap data"),
            [
                "does not hold a catalog olm-py can read (cannot parse ConfigMap data)",
                "data.packages",
            ],
        ),
    ],
)
def test_configmap_failures_are_sentences(failure: Failure, fragments: list[str]) -> None:
    message = failure_message("ns", "src", "cm", failure)
    for fragment in fragments:
        assert fragment in message
    assert reason_for(failure) == CatalogSourceReason.CONFIGMAP_ERROR


def test_a_configmap_catalogs_configmap_goes_with_its_catalog_source_as_under_olm() -> None:
    from olm.catalogsource.source import configmap_ownership

    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "metadata": {"name": "cat", "namespace": "ns", "uid": "u1"},
    }
    other = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u0"}
    configmap = {
        "metadata": {
            "name": "cm",
            "namespace": "ns",
            "resourceVersion": "7",
            "ownerReferences": [other],
        }
    }
    patch = configmap_ownership(source, configmap)
    assert patch is not None
    mine = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "name": "cat",
        "uid": "u1",
        "controller": False,
        "blockOwnerDeletion": False,
    }
    # A merge patch: every owner it has and its own, refused if the ConfigMap changed since.
    assert patch == {
        "metadata": {
            "resourceVersion": "7",
            "ownerReferences": [other, mine],
            "labels": {"olm.managed": "false"},
        }
    }
    owned = {
        "metadata": {
            **configmap["metadata"],
            "ownerReferences": [other, mine],
            "labels": {"olm.managed": "true"},
        }
    }
    assert configmap_ownership(source, owned) is None
    # A second CatalogSource of the same ConfigMap adds itself and keeps the first.
    second = {**source, "metadata": {"name": "cat2", "namespace": "ns", "uid": "u2"}}
    both = configmap_ownership(second, owned)
    assert both is not None and [o["uid"] for o in both["metadata"]["ownerReferences"]] == [
        "u0",
        "u1",
        "u2",
    ]
    assert "labels" not in both["metadata"]
