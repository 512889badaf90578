"""Scoped installs (OLM v0 `lib/scoped`): an OperatorGroup's `spec.serviceAccountName`.

- The group's `status.serviceAccountRef` is an ObjectReference to the ServiceAccount once it
  exists (OLM's syncer); while it does not, the group says `OperatorGroupServiceAccount=True`
  (reason `ServiceAccountNotFound`) and has no ref.
- Which ServiceAccount a namespace's installs act as (OLM's querier): none when the namespace
  has no group managing namespaces, or its group names none; an error when several groups
  manage it, or the group names a ServiceAccount that is not synced to its status yet.
- olm-py acts as the ServiceAccount by impersonation: the user is
  `system:serviceaccount:<namespace>:<name>`.

Invariants: pure; reads only its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olm.api import body

SERVICE_ACCOUNT_USER_PREFIX = "system:serviceaccount:"


def service_account_name(group: Mapping[str, Any]) -> str:
    return str((group.get("spec") or {}).get("serviceAccountName") or "")


def service_account_ref(service_account: Mapping[str, Any]) -> dict[str, str]:
    """The ObjectReference OLM writes to `status.serviceAccountRef` (without the
    resourceVersion, so a label change of the ServiceAccount does not rewrite the group)."""
    meta = body.meta(service_account)
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "namespace": str(meta.get("namespace") or ""),
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
    }


def service_account_missing_message(group: Mapping[str, Any]) -> str:
    """OLM's message, then what to do."""
    name, namespace = service_account_name(group), str(body.meta(group).get("namespace") or "")
    return (
        f"ServiceAccount {name} not found: create it (kubectl create serviceaccount {name} "
        f"-n {namespace}) and grant it what the operators of this group install, or remove "
        "spec.serviceAccountName to install with olm-py's own permissions"
    )


def user_of(ref: Mapping[str, Any]) -> str:
    """The user name the API server gives the ServiceAccount `ref` names."""
    return f"{SERVICE_ACCOUNT_USER_PREFIX}{ref.get('namespace', '')}:{ref.get('name', '')}"


def query_service_account(
    groups: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any] | None, str | None]:
    """(the ServiceAccount ref installs in the namespace act as, or None for olm-py itself;
    the problem that stops them, or None). `groups` are the namespace's OperatorGroups."""
    managing = [g for g in groups if (g.get("status") or {}).get("namespaces")]
    if not managing:
        return None, None
    if len(managing) > 1:
        names = ", ".join(sorted(str(body.meta(g).get("name")) for g in managing))
        return None, (
            "more than one operator group(s) are managing this namespace "
            f"count={len(managing)} ({names}): delete all but one"
        )
    group = managing[0]
    name = service_account_name(group)
    if not name:
        return None, None
    ref = (group.get("status") or {}).get("serviceAccountRef")
    meta = body.meta(group)
    if not isinstance(ref, Mapping) or ref.get("name") != name:
        return None, (
            f"please make sure the service account exists. sa={name} "
            f"operatorgroup={meta.get('namespace')}/{meta.get('name')} "
            f"(kubectl create serviceaccount {name} -n {meta.get('namespace')})"
        )
    return dict(ref), None


def attenuated_user(groups: Sequence[Mapping[str, Any]]) -> str | None:
    """The user a namespace's operator Deployments are written as (None: olm-py itself)."""
    ref, _ = query_service_account(groups)
    return user_of(ref) if ref else None
