"""Property: the CatalogSource decision never raises and always decides, on any spec/status
shape and any read outcome; a status it wrote is a fixed point."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from olm.catalog.model import Catalog, Package, Problem
from olm.catalogsource.decide import Fetched, SourcePlan, SourceSnapshot, decide
from olm.catalogsource.failures import Failure, FailureKind, grpc_failure
from olm.catalogsource.source import parse_duration

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
junk = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6), st.just({"a": 1}))
spec = st.fixed_dictionaries(
    {},
    optional={
        "sourceType": st.one_of(st.sampled_from(["grpc", "configmap", "internal", ""]), junk),
        "address": st.one_of(st.sampled_from(["127.0.0.1:1", " ", "h:2"]), junk),
        "image": junk,
        "configMap": st.one_of(st.sampled_from(["cm", ""]), junk),
        "priority": junk,
        "updateStrategy": st.fixed_dictionaries(
            {},
            optional={
                "registryPoll": st.fixed_dictionaries(
                    {},
                    optional={
                        "interval": st.one_of(st.sampled_from(["2s", "1h30m", "0", "x"]), junk)
                    },
                )
            },
        ),
    },
)
status = st.fixed_dictionaries(
    {},
    optional={
        "reason": st.sampled_from(["SpecInvalidError", "RegistryServerError", "x"]),
        "message": st.text(max_size=6),
        "connectionState": st.fixed_dictionaries(
            {},
            optional={
                "address": st.sampled_from(["127.0.0.1:1", "h:2"]),
                "lastObservedState": st.sampled_from(["READY", "TRANSIENT_FAILURE"]),
                "lastConnect": st.just("2025-01-01T00:00:00Z"),
            },
        ),
        "latestImageRegistryPoll": st.just("2025-01-01T00:00:00Z"),
    },
)


def catalog_with(errors: int) -> Catalog:
    found = Catalog(packages={"p": Package("p")})
    found.problems = [Problem("r", "broken") for _ in range(errors)]
    return found


failure = st.one_of(
    st.builds(
        grpc_failure,
        st.sampled_from(
            ["UNAVAILABLE", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNKNOWN"]
        ),
        st.text(max_size=20),
        st.text(max_size=20),
        st.floats(min_value=0, max_value=60),
    ),
    st.builds(Failure, st.sampled_from(list(FailureKind)), st.text(max_size=10)),
)
fetched = st.one_of(
    st.just(Fetched()),
    st.builds(Fetched, failure=failure),
    st.builds(
        Fetched,
        catalog=st.integers(0, 1).map(catalog_with),
        configmap=st.one_of(
            st.none(),
            st.just(
                {"metadata": {"name": "cm", "namespace": "ns", "uid": "u", "resourceVersion": "1"}}
            ),
        ),
    ),
)


@settings(deadline=None)
@given(spec=spec, status=st.one_of(st.none(), status), present=st.booleans(), fetched=fetched)
def test_decide_always_decides(
    spec: dict[str, Any], status: dict[str, Any] | None, present: bool, fetched: Fetched
) -> None:
    source: dict[str, Any] = {"metadata": {"name": "src", "namespace": "ns"}, "spec": spec}
    if status is not None:
        source["status"] = status
    snapshot = SourceSnapshot("ns", "src", source if present else None, NOW)
    plan = decide(snapshot, fetched)
    assert isinstance(plan, SourcePlan)
    if plan.status is not None:
        assert present
        merged = {k: v for k, v in {**(status or {}), **plan.status}.items() if v is not None}
        again = decide(SourceSnapshot("ns", "src", {**source, "status": merged}, NOW), fetched)
        assert again.status is None and again.event is None
        message = plan.status.get("message") or ""
        assert "Rendezvous" not in message and "StatusCode" not in message


@settings(deadline=None)
@given(text=st.text(alphabet="0123456789.hmsunµ+-x ", max_size=12))
def test_parse_duration_never_raises(text: str) -> None:
    result = parse_duration(text)
    assert result is None or isinstance(result, float)
