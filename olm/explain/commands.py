"""The commands `olm explain` proposes, as a user would type them into a POSIX shell.

Every command acts on exactly the object the chain names (kind, name and namespace spelled
out), quotes what the shell would otherwise read (`shlex.quote`), and is built from the same
kind table as `kubectl get` (`olm.api.kinds`). A value the cluster cannot tell (an address, a
file) is written `<like-this>` so that the command is visibly incomplete rather than wrong.

Invariant: pure; strings only.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from olm.api.kinds import KINDS, Kind


def resource(kind: Kind) -> str:
    """The resource name used in commands: the kind in lower case (`installplan`)."""
    return kind.value.lower()


def _ns(namespace: str) -> str:
    return f" -n {shlex.quote(namespace)}" if namespace else ""


def merge_patch(kind: Kind, name: str, namespace: str, patch: Mapping[str, Any]) -> str:
    body = json.dumps(patch, separators=(",", ":"))
    return (
        f"kubectl patch {resource(kind)} {shlex.quote(name)}{_ns(namespace)} "
        f"--type=merge -p {shlex.quote(body)}"
    )


def json_patch(kind: Kind, name: str, namespace: str, ops: Sequence[Mapping[str, Any]]) -> str:
    body = json.dumps(list(ops), separators=(",", ":"))
    return (
        f"kubectl patch {resource(kind)} {shlex.quote(name)}{_ns(namespace)} "
        f"--type=json -p {shlex.quote(body)}"
    )


def approve(plan: str, namespace: str) -> str:
    return merge_patch(Kind.INSTALL_PLAN, plan, namespace, {"spec": {"approved": True}})


def delete(kind: Kind | str, name: str, namespace: str) -> str:
    what = resource(kind) if isinstance(kind, Kind) else kind.lower()
    return f"kubectl delete {what} {shlex.quote(name)}{_ns(namespace)}"


def edit(kind: Kind, name: str, namespace: str) -> str:
    return f"kubectl edit {resource(kind)} {shlex.quote(name)}{_ns(namespace)}"


def describe(kind: str, name: str, namespace: str) -> str:
    return f"kubectl describe {kind.lower()} {shlex.quote(name)}{_ns(namespace)}"


def get(kind: str, namespace: str | None, *extra: str) -> str:
    where = " -A" if namespace is None else _ns(namespace)
    tail = "".join(f" {shlex.quote(e)}" for e in extra)
    return f"kubectl get {kind}{where}{tail}"


def apply_json(obj: Mapping[str, Any], namespace: str) -> str:
    """`kubectl apply` of one object given inline (one line, no file needed)."""
    body = json.dumps(obj, separators=(",", ":"))
    return f"echo {shlex.quote(body)} | kubectl apply{_ns(namespace)} -f -"


def operator_group(namespace: str, targets: Sequence[str] | None) -> str:
    """Create an OperatorGroup: targeting `targets`, or every namespace when None."""
    body: dict[str, Any] = {
        "apiVersion": KINDS[Kind.OPERATOR_GROUP].api_version,
        "kind": Kind.OPERATOR_GROUP.value,
        "metadata": {"name": namespace},
        "spec": {} if targets is None else {"targetNamespaces": list(targets)},
    }
    return apply_json(body, namespace)


def subscription(
    name: str, namespace: str, package: str, source: str, source_namespace: str, channel: str = ""
) -> str:
    body_spec = {"name": package, "source": source, "sourceNamespace": source_namespace}
    if channel:
        body_spec["channel"] = channel
    body = {
        "apiVersion": KINDS[Kind.SUBSCRIPTION].api_version,
        "kind": Kind.SUBSCRIPTION.value,
        "metadata": {"name": name},
        "spec": body_spec,
    }
    return apply_json(body, namespace)


def create_namespace(name: str) -> str:
    return f"kubectl create namespace {shlex.quote(name)}"


def create_service_account(name: str, namespace: str) -> str:
    return f"kubectl create serviceaccount {shlex.quote(name)}{_ns(namespace)}"


def grant(rule: Mapping[str, Any], service_account: str, namespace: str, cluster: bool) -> str:
    """A Role (or ClusterRole) with `rule` and its binding to the ServiceAccount ("" for a
    rule kubectl's shorthand cannot express)."""
    verbs = ",".join(str(v) for v in rule.get("verbs") or [])
    groups = [str(g) for g in rule.get("apiGroups") or [""]]
    resources = [f"{r}.{g}" if g else str(r) for g in groups for r in rule.get("resources") or []]
    if not resources:
        return ""  # a non-resource URL rule: no kubectl shorthand grants it
    role = f"{service_account}-explain"[:63]
    names = "".join(
        f" --resource-name={shlex.quote(str(n))}" for n in rule.get("resourceNames") or []
    )
    what = f"--verb={shlex.quote(verbs)} --resource={shlex.quote(','.join(resources))}{names}"
    account = shlex.quote(f"{namespace}:{service_account}")
    if cluster:
        return (
            f"kubectl create clusterrole {role} {what} && kubectl create clusterrolebinding "
            f"{role} --clusterrole={role} --serviceaccount={account}"
        )
    return (
        f"kubectl create role {role} {what}{_ns(namespace)} && kubectl create rolebinding "
        f"{role} --role={role} --serviceaccount={account}{_ns(namespace)}"
    )


def explain(kind: Kind, name: str, namespace: str) -> str:
    return f"olm explain {resource(kind)}/{shlex.quote(name)}{_ns(namespace)}"
