"""Parse and validate a CSV's install strategy into the one strategy model,
`olm.api.views.Strategy` (the model `CsvView` reads leniently).

Invariant: `parse_strategy` either returns a fully checked `Strategy` or raises
`InvalidStrategy` whose message names the field path and the fix; the phase machine turns that
into `Failed/InvalidInstallStrategy`.

Where olm-py is stricter than OLM v0: a `deployment` strategy with no `spec.install.spec` at
all is invalid (OLM reads it as zero deployments and reports Succeeded with nothing
installed). An explicit `spec.install.spec.deployments: []` still installs nothing, as in OLM.
"""

from __future__ import annotations

from typing import Any

from olm.api.views import Strategy, StrategyDeployment, StrategyPermission

__all__ = ["DEPLOYMENT_STRATEGY", "InvalidStrategy", "Strategy", "parse_strategy"]

DEPLOYMENT_STRATEGY = "deployment"


class InvalidStrategy(ValueError):
    """The install strategy cannot be used; the message names the field and the fix."""


def _require_mapping(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidStrategy(f"{path} must be an object, got {type(value).__name__}")
    return value


def _require_list(parent: dict[str, Any], key: str, path: str) -> list[Any]:
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidStrategy(f"{path}.{key} must be a list, got {type(value).__name__}")
    return value


def parse_strategy(csv: dict[str, Any]) -> Strategy:
    spec = csv.get("spec") or {}
    install = spec.get("install")
    if install is None:
        raise InvalidStrategy("spec.install is missing: add spec.install with strategy: deployment")
    install = _require_mapping(install, "spec.install")
    name = install.get("strategy")
    if name != DEPLOYMENT_STRATEGY:
        raise InvalidStrategy(
            f"unrecognized install strategy {name!r} at spec.install.strategy: "
            f"the only supported strategy is {DEPLOYMENT_STRATEGY!r}"
        )
    if install.get("spec") is None:
        raise InvalidStrategy(
            "spec.install.spec is missing: a deployment install strategy needs "
            "spec.install.spec.deployments (the operator's Deployments) and the permissions "
            "of their service accounts; for a CSV that installs no Deployment, set "
            "spec.install.spec.deployments: []"
        )
    body = _require_mapping(install["spec"], "spec.install.spec")
    deployments = []
    seen = set()
    for index, entry in enumerate(_require_list(body, "deployments", "spec.install.spec")):
        path = f"spec.install.spec.deployments[{index}]"
        entry = _require_mapping(entry, path)
        dep_name = entry.get("name")
        if not isinstance(dep_name, str) or not dep_name:
            raise InvalidStrategy(f"{path}.name is missing: every deployment needs a name")
        if dep_name in seen:
            raise InvalidStrategy(
                f"{path}.name {dep_name!r} is used twice: deployment names must be unique"
            )
        seen.add(dep_name)
        dep_spec = _require_mapping(entry.get("spec"), f"{path}.spec")
        _check_deployment_spec(dep_spec, f"{path}.spec")
        labels = _require_mapping(entry.get("label") or {}, f"{path}.label")
        deployments.append(StrategyDeployment(dep_name, dep_spec, dict(labels)))
    permissions = []
    for key, cluster in (("permissions", False), ("clusterPermissions", True)):
        for index, entry in enumerate(_require_list(body, key, "spec.install.spec")):
            path = f"spec.install.spec.{key}[{index}]"
            entry = _require_mapping(entry, path)
            account = entry.get("serviceAccountName")
            if not isinstance(account, str) or not account:
                raise InvalidStrategy(f"{path}.serviceAccountName is missing")
            rules = _require_list(entry, "rules", path)
            # The rules as written: judging each rule is the requirement check's job.
            permissions.append(StrategyPermission(account, tuple(rules), cluster))
    return Strategy(deployments, permissions)


def _optional_mapping(parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidStrategy(f"{path}.{key} must be an object, got {type(value).__name__}")
    return value


# The fields of apps/v1 DeploymentSpec.
DEPLOYMENT_SPEC_FIELDS = frozenset(
    {
        "minReadySeconds",
        "paused",
        "progressDeadlineSeconds",
        "replicas",
        "revisionHistoryLimit",
        "selector",
        "strategy",
        "template",
    }
)


def _check_deployment_spec(spec: dict[str, Any], path: str) -> None:
    """Type checks: a spec OLM could not even decode is an invalid strategy.

    Only the parts olm-py itself reads or adds to (the pod template's metadata, annotations,
    containers and their env) are checked here, and that the spec holds only DeploymentSpec
    fields (OLM drops others silently); everything else is the API server's to judge.
    """
    unknown = sorted(str(key) for key in spec if key not in DEPLOYMENT_SPEC_FIELDS)
    if unknown:
        # The API server's server-side apply refuses them one at a time, in no fixed order.
        fields = ", ".join(f"{path}.{key}" for key in unknown)
        raise InvalidStrategy(
            f"{fields}: not a field of a Deployment spec (was a StatefulSet or a Pod spec "
            f"pasted here?). A Deployment spec has {', '.join(sorted(DEPLOYMENT_SPEC_FIELDS))}: "
            "remove the others, or move them into the pod template"
        )
    template = spec.get("template")
    if not isinstance(template, dict):
        raise InvalidStrategy(f"{path}.template is missing: a deployment needs a pod template")
    meta = _optional_mapping(template, "metadata", f"{path}.template")
    _optional_mapping(meta, "annotations", f"{path}.template.metadata")
    pod = _optional_mapping(template, "spec", f"{path}.template")
    for key in ("containers", "initContainers"):
        for index, container in enumerate(_require_list(pod, key, f"{path}.template.spec")):
            where = f"{path}.template.spec.{key}[{index}]"
            container = _require_mapping(container, where)
            for env_index, env in enumerate(_require_list(container, "env", where)):
                _require_mapping(env, f"{where}.env[{env_index}]")
    # Semantic checks (selector vs labels, containers) are left to the API server, whose
    # message names the field; OLM reports those as InstallComponentFailed too.
    replicas = spec.get("replicas", 1)
    if not isinstance(replicas, int) or replicas < 0:
        raise InvalidStrategy(f"{path}.replicas must be a non-negative integer, got {replicas!r}")
