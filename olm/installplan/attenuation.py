"""Scoped InstallPlans (OLM v0 catalog operator with `status.attenuatedServiceAccountRef`):
what a Forbidden answer means, in words that name the missing verb, resource and namespace
and how to grant it.

OLM keeps such a plan Installing with "retrying execution due to error: ..." (a Forbidden is
never terminal: the admin may grant the permission at any time) and retries; olm-py does the
same, and says what to grant.

Invariants: pure; reads only its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from olm.api import body

RETRYING_PREFIX = "retrying execution due to error: "

# The RBAC authorizer's refusal, e.g. `User "system:serviceaccount:ns:sa" cannot create
# resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "ns"`.
_CANNOT = re.compile(
    r'cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
    r'(?: in the namespace "(?P<namespace>[^"]+)"| at the cluster scope)?'
)
_ESCALATION = "is attempting to grant RBAC permissions not currently held"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:50] or "install"


def forbidden_message(
    error: str, ref: Mapping[str, Any], manifest: Mapping[str, Any], group_name: str = ""
) -> str:
    """Why the ServiceAccount `ref` may not write `manifest`, and the fix."""
    sa, sa_ns = str(ref.get("name", "")), str(ref.get("namespace", ""))
    who = f"ServiceAccount {sa_ns}/{sa}" + (
        f" (spec.serviceAccountName of OperatorGroup {group_name})" if group_name else ""
    )
    step = f"{manifest.get('kind', '')} {body.meta(manifest).get('name', '')}"
    tail = " The InstallPlan retries by itself once the permission is granted."
    found = _CANNOT.search(error)
    if found:
        verb, resource, api_group = found["verb"], found["resource"], found["group"]
        namespace = found["namespace"]
        qualified = f"{resource}.{api_group}" if api_group else resource
        name = _slug(f"{sa}-{verb}-{resource}")
        where = f"in namespace {namespace}" if namespace else "at the cluster scope"
        if namespace:
            fix = (
                f"kubectl create role {name} --verb={verb} --resource={qualified} -n {namespace}"
                f" && kubectl create rolebinding {name} --role={name} "
                f"--serviceaccount={sa_ns}:{sa} -n {namespace}"
            )
        else:
            fix = (
                f"kubectl create clusterrole {name} --verb={verb} --resource={qualified} && "
                f"kubectl create clusterrolebinding {name} --clusterrole={name} "
                f"--serviceaccount={sa_ns}:{sa}"
            )
        return (
            # The API server's own words too: scripts (and OLM's e2e suite) look for them.
            f"{RETRYING_PREFIX}step {step}: {who} may not {verb} {qualified} {where}: "
            f"{found[0]}. Grant it, e.g.: {fix}.{tail}"
        )
    if _ESCALATION in error:
        rules = error.split(_ESCALATION, 1)[1].strip(" :\n")
        return (
            f"{RETRYING_PREFIX}step {step}: {who} may not grant permissions it does not hold "
            f"itself ({rules.splitlines()[0] if rules else 'see the API server message'}). "
            f"Grant the ServiceAccount every rule of this {manifest.get('kind', 'role')} "
            f"(or the escalate and bind verbs on roles).{tail}"
        )
    return f"{RETRYING_PREFIX}step {step}: {who} is not allowed to write it: {error}.{tail}"
