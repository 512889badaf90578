"""The install form's decision: which OperatorGroup (if any) and which Subscription to create.

As OLM's docs say: a namespace needs exactly one OperatorGroup before a Subscription in it can
install. An install "in a namespace" targets that namespace (OwnNamespace); one "in all
namespaces" goes into the `operators` namespace, whose OperatorGroup `global-operators`
targets every namespace. An OperatorGroup is created only when the namespace has none; one
whose targets do not fit the package is said, not changed.

olm-py's version policies (docs/beyond-olm.md) are annotations of the Subscription, as
`kubectl annotate` would write them: `olm-py.io/auto-approve` (first, patch or minor, with
Manual approval) and `olm-py.io/version-range`.

Invariants: pure (form values and what the namespace holds in, a decision out); every problem is
a sentence naming the field and the fix, and a decision with problems creates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.kinds import KINDS, Kind
from olm.api.versionpolicy import AUTO_APPROVE_ANNOTATION, VERSION_RANGE_ANNOTATION, AutoApprove
from olm.console.catalog import Card
from olm.resolution.versionrange import parse_version_range

Obj = dict[str, Any]
GLOBAL_NAMESPACE = "operators"
GLOBAL_GROUP = "global-operators"
APPROVALS = ("Automatic", "Manual")
# olm-py's auto-approve sizes a person picks at install (`all` is what Automatic does).
AUTO_APPROVALS = (AutoApprove.FIRST.value, AutoApprove.PATCH.value, AutoApprove.MINOR.value)
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class InstallForm:
    package: str
    catalog: str
    catalog_namespace: str
    channel: str
    scope: str  # "namespace" or "all"
    namespace: str
    approval: str
    starting_csv: str = ""
    auto_approve: str = ""  # olm-py.io/auto-approve on a Manual Subscription
    version_range: str = ""  # olm-py.io/version-range

    @classmethod
    def from_post(cls, data: Mapping[str, str]) -> InstallForm:
        def get(key: str) -> str:
            return str(data.get(key) or "").strip()

        return cls(
            get("package"),
            get("catalog"),
            get("catalog_namespace"),
            get("channel"),
            get("scope") or "namespace",
            get("namespace"),
            get("approval") or "Automatic",
            get("starting_csv"),
            get("auto_approve"),
            get("version_range"),
        )

    @property
    def target(self) -> str:
        """The namespace the Subscription goes into."""
        return GLOBAL_NAMESPACE if self.scope == "all" else self.namespace


@dataclass(frozen=True)
class InstallDecision:
    namespace: str
    creates: tuple[Obj, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


def _group(namespace: str, name: str, targets: Sequence[str] | None) -> Obj:
    info = KINDS[Kind.OPERATOR_GROUP]
    spec: Obj = {} if targets is None else {"targetNamespaces": list(targets)}
    return {
        "apiVersion": info.api_version,
        "kind": info.kind.value,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def subscription(form: InstallForm) -> Obj:
    info = KINDS[Kind.SUBSCRIPTION]
    spec: Obj = {
        "name": form.package,
        "channel": form.channel,
        "source": form.catalog,
        "sourceNamespace": form.catalog_namespace,
        "installPlanApproval": form.approval,
    }
    if form.starting_csv:
        spec["startingCSV"] = form.starting_csv
    metadata: Obj = {"name": form.package, "namespace": form.target}
    annotations = {
        key: value
        for key, value in (
            (AUTO_APPROVE_ANNOTATION, form.auto_approve),
            (VERSION_RANGE_ANNOTATION, form.version_range),
        )
        if value
    }
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": info.api_version,
        "kind": info.kind.value,
        "metadata": metadata,
        "spec": spec,
    }


def _form_problems(form: InstallForm, package: Card) -> list[str]:
    problems: list[str] = []
    channel = next((c for c in package.channels if c.name == form.channel), None)
    if channel is None:
        names = ", ".join(c.name for c in package.channels) or "none"
        problems.append(f"channel: {form.channel!r} is not a channel of {package.name} ({names})")
    if form.approval not in APPROVALS:
        problems.append(f"approval: choose {' or '.join(APPROVALS)}")
    if form.auto_approve and form.auto_approve not in AUTO_APPROVALS:
        problems.append(f"auto-approve: choose {', '.join(AUTO_APPROVALS)} or none")
    elif form.auto_approve and form.approval != "Manual":
        problems.append("auto-approve: olm-py approves plans by itself only under Manual approval")
    if form.version_range:
        try:
            parse_version_range(form.version_range)
        except ValueError as exc:
            problems.append(f"version range: {exc} (e.g. >=0.0.1 <0.1.0)")
    if form.scope not in ("namespace", "all"):
        problems.append("scope: choose a namespace or all namespaces")
    elif form.scope == "namespace" and not _DNS_LABEL.match(form.namespace):
        problems.append(
            f"namespace: {form.namespace!r} is not a namespace name (lower-case letters, digits, -)"
        )
    modes = channel.install_modes if channel else package.install_modes
    wanted = ("AllNamespaces",) if form.scope == "all" else ("OwnNamespace", "SingleNamespace")
    if channel is not None and not set(wanted) & set(modes):
        problems.append(
            f"scope: {package.name} {channel.version} does not support "
            f"{'all namespaces' if form.scope == 'all' else 'a single namespace'} "
            f"(it supports: {', '.join(modes) or 'no install mode'})"
        )
    if channel and form.starting_csv and form.starting_csv not in {e.name for e in channel.entries}:
        problems.append(f"version: {form.starting_csv} is not in channel {channel.name}")
    return problems


def decide(
    form: InstallForm,
    package: Card,
    groups: Sequence[Mapping[str, Any]],
    subscriptions: Sequence[Mapping[str, Any]],
) -> InstallDecision:
    """What to create for `form`, given the OperatorGroups and Subscriptions of its namespace."""
    namespace = form.target
    problems = _form_problems(form, package)
    taken = [s for s in subscriptions if (s.get("spec") or {}).get("name") == form.package]
    if taken:
        problems.append(
            f"namespace: {namespace} already has Subscription {body.name(taken[0])} "
            f"to {form.package}; open it under Installed operators"
        )
    notes: list[str] = []
    creates: list[Obj] = []
    if len(groups) > 1:
        names = ", ".join(sorted(body.name(g) for g in groups))
        problems.append(
            f"namespace: {namespace} has {len(groups)} OperatorGroups ({names}); OLM installs "
            "nothing there until only one is left"
        )
    elif not groups:
        if form.scope == "all":
            creates.append(_group(namespace, GLOBAL_GROUP, None))
        else:
            creates.append(_group(namespace, namespace, [namespace]))
        notes.append(f"creates OperatorGroup {body.name(creates[0])} in {namespace}")
    else:
        targets = list((groups[0].get("spec") or {}).get("targetNamespaces") or [])
        selector = (groups[0].get("spec") or {}).get("selector")
        every = not targets and not selector
        if form.scope == "all" and not every:
            problems.append(
                f"scope: OperatorGroup {body.name(groups[0])} in {namespace} does not target "
                "all namespaces"
            )
        notes.append(f"uses OperatorGroup {body.name(groups[0])} of {namespace}")
    if problems:
        return InstallDecision(namespace, problems=tuple(problems))
    creates.append(subscription(form))
    notes.append(f"creates Subscription {form.package} in {namespace}")
    return InstallDecision(namespace, tuple(creates), (), tuple(notes))
