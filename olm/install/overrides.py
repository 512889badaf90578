"""Subscription `spec.config` merged into a CSV's rendered Deployments, as OLM v0 does.

OLM v0 (pkg/controller/operators/olm/overrides) finds the Subscription whose
status.installedCSV names the CSV (olm-py also accepts status.currentCSV, so the first install
already carries the config) and merges, in this order, into every Deployment:
- env: by name into every container (not init containers); a config entry replaces the
  container's entry of the same name in place, new names are appended in config order;
- envFrom: appended to every container unless an equal entry is already there;
- volumes: by name into the pod (replace in place, else append);
- volumeMounts: by name into every container (replace in place, else append);
- tolerations: appended unless an equal one is already there;
- resources: replace every container's resources (when set);
- nodeSelector: replaces the pod's (when set);
- affinity: each non-null part (nodeAffinity, podAffinity, podAntiAffinity) replaces the pod's;
  an empty part removes it, an empty affinity removes the pod's affinity;
- annotations: added to the Deployment's and the pod template's annotations; keys already
  there are kept (the config never overrides them).
`selector` is accepted and, as in OLM, not merged into anything.

Pure: plain dicts in, a new dict out; the input is never modified.
"""

from __future__ import annotations

import copy
import decimal
import re
from typing import Any

CONFIG_FIELDS = (
    "env",
    "envFrom",
    "volumes",
    "volumeMounts",
    "tolerations",
    "resources",
    "nodeSelector",
    "affinity",
    "annotations",
    "selector",
)
_LISTS_OF_OBJECTS = ("env", "envFrom", "volumes", "volumeMounts", "tolerations")
_NAMED = ("env", "volumes", "volumeMounts")
_OBJECTS = ("resources", "nodeSelector", "affinity", "annotations", "selector")
_AFFINITY_PARTS = ("nodeAffinity", "podAffinity", "podAntiAffinity")


def config_problem(config: Any) -> str | None:
    """What is wrong with a Subscription's spec.config (None: nothing), naming the field.

    The Subscription CRD's schema catches most of this at the API server; olm-py checks again
    because a hand-made CRD or an older schema may let it through.
    """
    if config is None:
        return None
    if not isinstance(config, dict):
        return "spec.config must be an object"
    for key in _LISTS_OF_OBJECTS:
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            return f"spec.config.{key} must be a list"
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                return f"spec.config.{key}[{index}] must be an object"
            if key in _NAMED and not (isinstance(item.get("name"), str) and item["name"]):
                return f"spec.config.{key}[{index}].name must be a non-empty string"
    for key in _OBJECTS:
        value = config.get(key)
        if value is not None and not isinstance(value, dict):
            return f"spec.config.{key} must be an object"
    for key in ("nodeSelector", "annotations"):
        for k, v in (config.get(key) or {}).items():
            if not isinstance(v, str):
                return f"spec.config.{key}.{k} must be a string"
    affinity = config.get("affinity") or {}
    for part in _AFFINITY_PARTS:
        if affinity.get(part) is not None and not isinstance(affinity[part], dict):
            return f"spec.config.affinity.{part} must be an object"
    return None


_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}


def canonical_quantity(value: Any) -> Any:
    """A resource quantity as the API server writes it back ("0.5" -> "500m", 1 -> "1",
    "1024Mi" -> "1Gi", "2000" -> "2k"), so the Deployment read back equals what was applied
    and is not mistaken for drift. Anything unparsable is returned as is (the API server will
    refuse it, and the refusal is reported)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return value
    text = repr(value) if isinstance(value, float) else str(value)
    match = _QUANTITY.match(text)
    if match is None:
        return value
    number, suffix = decimal.Decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        amount = number * (1024 ** _BINARY[suffix])
        if amount == amount.to_integral_value() and abs(amount) >= 1024:
            whole, power = int(amount), 0
            while power < 6 and whole % 1024 == 0:
                whole //= 1024
                power += 1
            names = {v: k for k, v in _BINARY.items()}
            return f"{whole}{names[power]}" if power else str(whole)
    elif suffix[:1] in ("e", "E"):
        return value  # decimal exponent notation: kept as written (rare in practice)
    else:
        amount = number * decimal.Decimal(10) ** _DECIMAL[suffix]
    # Decimal SI: the largest multiple-of-3 exponent with an integral mantissa.
    amount = amount.normalize()
    if amount == 0:
        return "0"
    exponent = 18
    while exponent > -9:
        mantissa = amount.scaleb(-exponent)
        if mantissa == mantissa.to_integral_value():
            break
        exponent -= 3
    mantissa = amount.scaleb(-exponent).to_integral_value(rounding=decimal.ROUND_CEILING)
    return f"{int(mantissa)}{_DECIMAL_SUFFIX[exponent]}"


def served_quantity(value: Any) -> Any:
    """A container resource quantity as the API server stores it: canonical, and rounded up to
    milli-units, as its defaulting does for every resource ("100n" -> "1m", "1500u" -> "2m")."""
    canonical = canonical_quantity(value)
    if isinstance(canonical, str) and canonical[-1:] in ("n", "u"):
        digits = canonical[:-1]
        if digits.lstrip("-").isdigit():
            per_milli = 10**6 if canonical.endswith("n") else 10**3
            milli = -(-int(digits) // per_milli)  # ceiling
            return canonical_quantity(f"{milli}m")
    return canonical


def canonical_resources(resources: dict[str, Any]) -> dict[str, Any]:
    """`resources` with its limits and requests as the API server serves them back."""
    result = copy.deepcopy(resources)
    for key in ("limits", "requests"):
        if isinstance(result.get(key), dict):
            result[key] = {k: served_quantity(v) for k, v in result[key].items()}
    return result


def _merge_named(existing: list[Any], new: list[dict[str, Any]]) -> list[Any]:
    merged = list(existing)
    for item in new:
        index = next(
            (
                i
                for i, e in enumerate(merged)
                if isinstance(e, dict) and e.get("name") == item["name"]
            ),
            None,
        )
        if index is None:
            merged.append(copy.deepcopy(item))
        else:
            merged[index] = copy.deepcopy(item)
    return merged


def _append_missing(existing: list[Any], new: list[dict[str, Any]]) -> list[Any]:
    merged = list(existing)
    for item in new:
        if item not in merged:
            merged.append(copy.deepcopy(item))
    return merged


def _merge_affinity(current: Any, override: dict[str, Any]) -> dict[str, Any] | None:
    if not current or override == {}:
        return copy.deepcopy(override) or None
    merged = dict(current)
    for part in _AFFINITY_PARTS:
        value = override.get(part)
        if value is None:
            continue
        if value == {}:
            merged.pop(part, None)
        else:
            merged[part] = copy.deepcopy(value)
    return merged or None


def apply_config(deployment: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
    """The Deployment with the Subscription config merged in (a copy; no config: an equal copy).

    `config` must have passed `config_problem`.
    """
    merged = copy.deepcopy(deployment)
    if not config:
        return merged
    spec = merged.setdefault("spec", {})
    template = spec.setdefault("template", {})
    pod = template.setdefault("spec", {})
    containers = pod.get("containers") or []

    for container in containers:
        if config.get("env"):
            container["env"] = _merge_named(container.get("env") or [], config["env"])
        if config.get("envFrom"):
            container["envFrom"] = _append_missing(
                container.get("envFrom") or [], config["envFrom"]
            )
    if config.get("volumes"):
        pod["volumes"] = _merge_named(pod.get("volumes") or [], config["volumes"])
    if config.get("volumeMounts"):
        for container in containers:
            container["volumeMounts"] = _merge_named(
                container.get("volumeMounts") or [], config["volumeMounts"]
            )
    if config.get("tolerations"):
        pod["tolerations"] = _append_missing(pod.get("tolerations") or [], config["tolerations"])
    if config.get("resources") is not None:
        for container in containers:
            container["resources"] = canonical_resources(config["resources"])
    if config.get("nodeSelector") is not None:
        pod["nodeSelector"] = dict(config["nodeSelector"])
    if config.get("affinity") is not None:
        affinity = _merge_affinity(pod.get("affinity"), config["affinity"])
        if affinity is None:
            pod.pop("affinity", None)
        else:
            pod["affinity"] = affinity
    annotations = config.get("annotations")
    if annotations:
        meta = merged.setdefault("metadata", {})
        meta["annotations"] = {**annotations, **(meta.get("annotations") or {})}
        template_meta = template.setdefault("metadata", {})
        template_meta["annotations"] = {**annotations, **(template_meta.get("annotations") or {})}
    return merged
