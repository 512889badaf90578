"""Property: the OperatorGroup decision never raises and always decides, on any object shape."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from olm.groups.decide import GroupPlan, GroupSnapshot, decide

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
names = st.sampled_from(["own", "a", "b", "", "gone", "ünï"])
junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.just({"name": "Default"})
)
selector = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": st.dictionaries(st.sampled_from(["team", "x"]), st.text(max_size=3)),
            "matchExpressions": st.lists(
                st.fixed_dictionaries(
                    {
                        "key": st.sampled_from(["team", "x"]),
                        "operator": st.sampled_from(
                            ["In", "NotIn", "Exists", "DoesNotExist", "??"]
                        ),
                    },
                    optional={"values": st.lists(st.text(max_size=3), max_size=2)},
                ),
                max_size=2,
            ),
        },
    ),
)
spec = st.fixed_dictionaries(
    {},
    optional={
        "targetNamespaces": st.lists(names, max_size=4),
        "selector": selector,
        "staticProvidedAPIs": st.booleans(),
        "upgradeStrategy": st.one_of(
            st.sampled_from(["Default", "TechPreviewUnsafeFailForward"]), junk
        ),
    },
)
condition = st.fixed_dictionaries(
    {"type": st.sampled_from(["MultipleOperatorGroup", "MissingTargetNamespaces", "Other"])},
    optional={"status": st.sampled_from(["True", "False"]), "message": st.text(max_size=5)},
)
status = st.fixed_dictionaries(
    {},
    optional={
        "namespaces": st.lists(names, max_size=3),
        "lastUpdated": st.just("2025-01-01T00:00:00Z"),
        "conditions": st.lists(condition, max_size=3),
    },
)
owned = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["as.x.io", "noplural", ""]),
        "kind": st.text(max_size=3),
        "version": st.text(max_size=3),
    },
)
csv = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["c1", "c2", "c3"]), "namespace": st.just("own")},
            optional={
                "annotations": st.dictionaries(
                    st.sampled_from(["olm.operatorGroup", "olm.targetNamespaces"]),
                    st.text(max_size=4),
                ),
                "labels": st.dictionaries(st.just("olm.copiedFrom"), st.text(max_size=3)),
            },
        )
    },
    optional={
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "customresourcedefinitions": st.fixed_dictionaries(
                    {}, optional={"owned": st.lists(owned, max_size=2)}
                )
            },
        ),
        "status": st.fixed_dictionaries(
            {},
            optional={
                "reason": st.sampled_from(
                    ["Copied", "NoOperatorGroup", "TooManyOperatorGroups", "x"]
                )
            },
        ),
    },
)


def group_of(spec: dict[str, Any], status: dict[str, Any] | None) -> dict[str, Any]:
    group: dict[str, Any] = {"metadata": {"name": "og", "namespace": "own"}, "spec": spec}
    if status is not None:
        group["status"] = status
    return group


@settings(deadline=None)
@given(
    spec=spec,
    status=st.one_of(st.none(), status),
    present=st.booleans(),
    siblings=st.lists(st.sampled_from(["og", "og2", "og3"]), max_size=3, unique=True),
    namespaces=st.dictionaries(
        names, st.dictionaries(st.sampled_from(["team", "x"]), st.text(max_size=3)), max_size=4
    ),
    terminating=st.booleans(),
    csvs=st.lists(csv, max_size=3),
)
def test_decide_always_decides(
    spec: dict[str, Any],
    status: dict[str, Any] | None,
    present: bool,
    siblings: list[str],
    namespaces: dict[str, dict[str, str]],
    terminating: bool,
    csvs: list[dict[str, Any]],
) -> None:
    snapshot = GroupSnapshot(
        namespace="own",
        name="og",
        group=group_of(spec, status) if present else None,
        sibling_names=tuple(sorted({"og", *siblings})),
        namespaces=namespaces,
        namespace_terminating=terminating,
        csvs=tuple(csvs),
        now=NOW,
    )
    plan = decide(snapshot)
    assert isinstance(plan, GroupPlan)
    if plan.status is not None and present and not terminating:
        # The written status is a fixed point: deciding again over it writes nothing more.
        merged = {**(status or {}), **plan.status}
        again = decide(GroupSnapshot(**{**snapshot.__dict__, "group": group_of(spec, merged)}))
        assert again.status is None
