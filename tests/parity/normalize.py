"""Normalize the objects a parity scenario collects, and diff two runs field by field.

Pure functions on plain dicts (no cluster, no kubernetes client): the parity suite collects
the same objects from a reference cluster (the real OLM v0) and from an olm-py cluster, and
these functions take away what legitimately differs between any two runs - uids,
resourceVersions, timestamps, managedFields, generated-name suffixes, hash formats - and report
every remaining difference as a `Difference` (point, object, JSON path, reference value, olm-py
value).

Normalization rules (each has a unit test in tests/unit/parity/):
- `metadata.uid` values become `<uid:Kind/namespace/name>` everywhere they appear (owner
  references, `olm.operatorgroup.uid/<uid>` label keys, messages); any other UUID becomes
  `<uid>`.
- Keys `resourceVersion`, `managedFields`, `creationTimestamp`, `deletionTimestamp`,
  `generateName`, `clusterIP(s)` (a Service's address) are dropped; a webhook configuration's
  generated name `<name>-<5 chars>` becomes `<name>-<suffix>`; and the annotation `kubectl.kubernetes.io/last-applied-configuration`.
- RFC 3339 timestamps (whole strings) become `<time>`.
- InstallPlan names `install-xxxxx` become `install-<n>`, numbered in creation order.
- Generated RBAC names (Role/RoleBinding/ClusterRole/ClusterRoleBinding labelled `olm.owner`
  whose name is `<owner>...-<hash>`) lose their hash: `<base>-<hash>`, where base is cut to
  `RBAC_BASE` characters, since OLM cuts `<csv>-<sa>` to fit a base62 hash into 63 characters
  and olm-py appends 10 hex digits.
- Every replacement is applied to every string and dict key of the snapshot, so references to a
  renamed object (roleRef, installPlanRef, step names, messages) follow it.
- InstallPlan step manifests (JSON text) are parsed and normalized like objects.
- Empty values (`{}`, `[]`, `""`) are dropped as if omitted (OLM's Go encoding writes zero
  values olm-py omits), except in labels and annotations, where `""` is a value.
- The values of the hash labels `olm.deployment-spec-hash` and `olm.permissions.hash` become
  `<hash>`; each cluster's own CA, a `caBundle` and the `olmcahash` annotation, becomes `<ca>`; `127.0.0.1:PORT` becomes `127.0.0.1:<port>`; a ReplicaSet's pod-template hash in
  messages becomes `<hash>`.
- Lists whose items all have distinct `name`s or `type`s are compared by that key; the order
  matters for `name` lists (containers, steps), not for `type` lists (conditions).
- Events about OLM's kinds are reduced to one `EventReasons` object per involved object: the
  sorted distinct (type, reason) pairs (OLM aggregates repeated Events, olm-py records each);
  Events about pods and ReplicaSets (Kubernetes' own) are dropped.
- Per kind, first (tests/parity/reshape.py): a CSV's `status.conditions` history loses its
  `Installing/InstallWaiting` entries, which appear or not depending on when the Deployment's
  status arrives; a PackageManifest's `currentCSVDesc.relatedImages` are sorted (OLM's
  packageserver gathers them in a Go map: their order changes from call to call).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.parity.reshape import BY_KIND

Obj = dict[str, Any]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
INSTALL_PLAN_NAME = re.compile(r"^install-[a-z0-9]{5}$")
DROPPED_KEYS = frozenset(
    {
        "resourceVersion",
        "managedFields",
        "creationTimestamp",
        "deletionTimestamp",
        "generateName",
        "clusterIP",  # a Service's address, the cluster's pick
        "clusterIPs",
    }
)
WEBHOOK_KINDS = frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"})
GENERATED_SUFFIX = re.compile(r"^(.+)-[a-z0-9]{5}$")
DROPPED_ANNOTATIONS = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
HASH_LABELS = frozenset({"olm.deployment-spec-hash", "olm.permissions.hash"})
# Each cluster makes its own CA for webhooks and APIServices: its PEM and its hash differ.
CA_KEYS = frozenset({"caBundle"})
CA_ANNOTATIONS = frozenset({"olmcahash"})
LOCAL_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d{2,5}\b")
REPLICA_SET = re.compile(r'(ReplicaSet \\?"[a-z0-9.-]+)-[a-z0-9]{6,10}(\\?")')
RBAC_KINDS = frozenset({"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"})
RBAC_BASE = 40
# Events kept: those about OLM's objects (the rest come from Kubernetes' own controllers,
# about pods and ReplicaSets with random names).
TIMING_REASONS = frozenset({"InstallWaiting"})  # see _csv_history
EVENT_KINDS = frozenset(
    {
        "ClusterServiceVersion",
        "InstallPlan",
        "Subscription",
        "OperatorGroup",
        "CatalogSource",
        "Operator",
        "OperatorCondition",
        "Namespace",
    }
)
MISSING = "<absent>"
EMPTY: tuple[Any, ...] = ({}, [], "")


@dataclass(frozen=True)
class Difference:
    point: str  # the snapshot point of the scenario, e.g. "installed"
    object: str  # "Kind namespace/name" after normalization
    path: str  # JSON path inside the object; "" for the whole object
    reference: Any
    olm_py: Any

    @property
    def kind(self) -> str:
        return self.object.split(" ", 1)[0]

    def __str__(self) -> str:
        where = f"{self.object} {self.path}".rstrip()
        return f"[{self.point}] {where}: reference={_short(self.reference)} olm-py={_short(self.olm_py)}"


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True) if value is not MISSING else MISSING
    return text if len(text) <= limit else text[: limit - 3] + "..."


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return (
        f"{obj.get('kind', '?')} {namespace}/{name}"
        if namespace
        else f"{obj.get('kind', '?')} {name}"
    )


def _uid_placeholder(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"<uid:{obj.get('kind', '?')}/{where}>"


def _rbac_canonical(name: str, owner: str) -> str | None:
    """A generated RBAC name -> `<owner>-<hash>`; None if `name` is not generated.

    Generated names are `<base>-<hash>` where base is `<owner>` or `<owner>-<sa>`, cut so that
    the whole fits in 63 characters (OLM v0.38: a long base62 hash, so `<owner>` itself may be
    cut; olm-py: 10 hex digits)."""
    if not owner:
        return None
    base, dash, suffix = name.rpartition("-")
    if not dash or not base or not re.fullmatch(r"[A-Za-z0-9]+", suffix):
        return None
    if not (owner.startswith(base) or base.startswith(owner)):
        return None
    return f"{owner}-<hash>"


def _step_manifests(objects: Iterable[Mapping[str, Any]]) -> list[Obj]:
    """The RBAC objects InstallPlans' steps carry (their names are generated too, and the
    objects themselves may be gone by the time of a snapshot)."""
    out: list[Obj] = []
    for plan in objects:
        if plan.get("kind") != "InstallPlan":
            continue
        for step in (plan.get("status") or {}).get("plan") or []:
            resource = step.get("resource") or {}
            manifest = resource.get("manifest")
            if resource.get("kind") not in RBAC_KINDS or not isinstance(manifest, str):
                continue
            with contextlib.suppress(ValueError):
                parsed = json.loads(manifest)
                if isinstance(parsed, dict):
                    out.append(
                        {
                            **parsed,
                            "kind": resource["kind"],
                            "metadata": {**(parsed.get("metadata") or {}), "uid": None},
                        }
                    )
    return out


def replacements(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Generated strings of these objects -> their stable placeholders."""
    table: dict[str, str] = {}
    plans: list[tuple[str, str]] = []
    for obj in [*objects, *_step_manifests(objects)]:
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if uid:
            table[uid] = _uid_placeholder(obj)
        name = meta.get("name") or ""
        kind = obj.get("kind")
        if kind == "InstallPlan" and INSTALL_PLAN_NAME.match(name):
            plans.append((meta.get("creationTimestamp") or "", name))
        if kind in WEBHOOK_KINDS and GENERATED_SUFFIX.match(name):
            # OLM's webhook configurations are generateName'd: <webhook name>-<5 chars>
            table[name] = GENERATED_SUFFIX.sub(r"\1-<suffix>", name)
        if kind in RBAC_KINDS and name.startswith("olm.og."):
            # OperatorGroup ClusterRoles: olm.og.<group>.<admin|edit|view>-<hash>
            base, dash, suffix = name.rpartition("-")
            if dash and re.fullmatch(r"[A-Za-z0-9]+", suffix):
                table[name] = f"{base}-<hash>"
        elif kind in RBAC_KINDS:
            labels = meta.get("labels") or {}
            owned_by_csv = labels.get("olm.owner.kind") in (None, "ClusterServiceVersion")
            owner = labels.get("olm.owner", "") if owned_by_csv else ""
            canonical = _rbac_canonical(name, owner)
            if canonical:
                table[name] = canonical
    for n, (_, name) in enumerate(sorted(set(plans)), start=1):
        table[name] = f"install-<{n}>"
    names = {k: v for k, v in table.items() if not v.startswith("<uid:")}
    pattern = _pattern(names)
    if pattern is not None:  # a uid placeholder names its object by its normalized name
        for key, value in table.items():
            if value.startswith("<uid:"):
                table[key] = pattern.sub(lambda m: names[m.group(0)], value)
    return table


def _substitute(text: str, table: Mapping[str, str], pattern: re.Pattern[str] | None) -> str:
    if pattern is not None:
        text = pattern.sub(lambda m: table[m.group(0)], text)
    text = UUID.sub("<uid>", text)
    text = LOCAL_PORT.sub(r"\1:<port>", text)
    text = REPLICA_SET.sub(r"\1-<hash>\2", text)
    if TIMESTAMP.match(text):
        return "<time>"
    return text


def _pattern(table: Mapping[str, str]) -> re.Pattern[str] | None:
    if not table:
        return None
    # Longest first, whole tokens only (a name inside a longer name is not that name).
    alternatives = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_.-])(?:{alternatives})(?![A-Za-z0-9_])")


def _normalize_value(value: Any, table: Mapping[str, str], pattern: re.Pattern[str] | None) -> Any:
    if isinstance(value, dict):
        out: Obj = {}
        for key, item in value.items():
            if key in DROPPED_KEYS:
                continue
            if key == "annotations" and isinstance(item, dict):
                item = {
                    k: "<ca>" if k in CA_ANNOTATIONS else v
                    for k, v in item.items()
                    if k not in DROPPED_ANNOTATIONS
                }
            if key in CA_KEYS and isinstance(item, str) and item:
                item = "<ca>"
            if key == "labels" and isinstance(item, dict):
                item = {k: "<hash>" if k in HASH_LABELS else v for k, v in item.items()}
            if key == "manifest" and isinstance(item, str) and item.startswith("{"):
                with contextlib.suppress(ValueError):
                    item = json.loads(item)
            if key in ("labels", "annotations") and isinstance(item, dict):
                # "" is a value here (a label that is set), not an omitted field
                normalized: Any = {
                    _substitute(k, table, pattern): _normalize_value(v, table, pattern)
                    for k, v in item.items()
                }
            else:
                normalized = _normalize_value(item, table, pattern)
            if normalized in EMPTY:  # Go's encoding writes zero values that others omit
                continue
            out[_substitute(key, table, pattern)] = normalized
        return out
    if isinstance(value, list):
        return [_normalize_value(item, table, pattern) for item in value]
    if isinstance(value, str):
        return _substitute(value, table, pattern)
    return value


def _event_reasons(events: list[Obj]) -> list[Obj]:
    by_object: dict[tuple[str, str, str], set[tuple[str, str]]] = {}
    stored: dict[tuple[str, str, str], set[str]] = {}
    for event in events:
        involved = event.get("involvedObject") or {}
        kind = involved.get("kind", "")
        # A Namespace is cluster-scoped: its Events are keyed by name alone, and where they
        # are stored (Kubernetes' recorder: `default`) is compared as `recordedIn`.
        namespace = "" if kind == "Namespace" else involved.get("namespace", "")
        key = (kind, namespace, involved.get("name", ""))
        by_object.setdefault(key, set()).add((event.get("type", ""), event.get("reason", "")))
        if kind == "Namespace":
            where = (event.get("metadata") or {}).get("namespace", "")
            stored.setdefault(key, set()).add(where)
    return [
        {
            "kind": "EventReasons",
            "metadata": {"namespace": ns, "name": f"{kind}.{name}"},
            "recordedIn": sorted(stored.get((kind, ns, name), ())),
            "reasons": {f"{t}/{r}": True for t, r in sorted(pairs) if r not in TIMING_REASONS},
        }
        for (kind, ns, name), pairs in sorted(by_object.items())
    ]


def _operator_refs(operator: Obj) -> Obj:
    """An Operator's `status.components.refs` keyed by "Kind namespace/name" (as object keys
    read), so that a component present on one side only is one difference, not a shift of
    every later entry of the list (their names repeat: a CSV and its OperatorCondition, a Role
    and its RoleBinding)."""
    status = operator.get("status")
    components = status.get("components") if isinstance(status, dict) else None
    refs = components.get("refs") if isinstance(components, dict) else None
    if not isinstance(refs, list):
        return operator
    keyed: Obj = {}
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        key = object_key({"kind": ref.get("kind"), "metadata": ref})
        while key in keyed:
            key += "'"
        keyed[key] = ref
    return {**operator, "status": {**status, "components": {**components, "refs": keyed}}}


def normalize(objects: Iterable[Mapping[str, Any]]) -> dict[str, Obj]:
    """One snapshot (objects as the API server returned them) -> normalized objects by key."""
    items = [BY_KIND.get(str(o.get("kind")), dict)(dict(o)) for o in objects]
    events = [
        o
        for o in items
        if o.get("kind") == "Event" and (o.get("involvedObject") or {}).get("kind") in EVENT_KINDS
    ]
    items = [o for o in items if o.get("kind") != "Event"] + _event_reasons(events)
    table = replacements(items)
    pattern = _pattern(table)
    by_key: dict[str, list[Obj]] = {}
    for obj in items:
        normalized = _normalize_value(obj, table, pattern)
        if normalized.get("kind") == "Operator":
            normalized = _operator_refs(normalized)
        by_key.setdefault(object_key(normalized), []).append(normalized)
    result: dict[str, Obj] = {}
    for key, group in by_key.items():
        # Objects normalized to one name (two generated ClusterRoles of one CSV) are told
        # apart by their content, in a stable order: key, key', key'', ...
        group.sort(key=lambda o: json.dumps(o, sort_keys=True))
        for index, normalized in enumerate(group):
            result[key + "'" * index] = normalized
    return result


def _list_key(items: list[Any]) -> str | None:
    """'name' or 'type' when every item is a dict with a distinct value for it."""
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    for field in ("name", "type"):
        values = [i.get(field) for i in items]
        if all(isinstance(v, str) for v in values) and len(set(values)) == len(values):
            return field
    return None


KEYED_MAPS = ("labels", "annotations")


def diff_values(reference: Any, olm_py: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(JSON path, reference value, olm-py value) for every leaf that differs."""
    if isinstance(reference, dict) and isinstance(olm_py, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(reference) | set(olm_py)):
            sub = f"{path}.{key}" if path else key
            if key in KEYED_MAPS and isinstance(reference.get(key, olm_py.get(key)), dict):
                # labels and annotations are maps of independent keys: one side having none
                # is a difference per key (so a listed annotation stays listed)
                out.extend(diff_values(reference.get(key, {}), olm_py.get(key, {}), sub))
            elif key not in olm_py:
                out.append((sub, reference[key], MISSING))
            elif key not in reference:
                out.append((sub, MISSING, olm_py[key]))
            else:
                out.extend(diff_values(reference[key], olm_py[key], sub))
        return out
    if isinstance(reference, list) and isinstance(olm_py, list):
        field = _list_key(reference)
        if field is not None and field == _list_key(olm_py):
            ref_by = {i[field]: i for i in reference}
            py_by = {i[field]: i for i in olm_py}
            keyed = {
                f"{path}[{field}={k}]": (ref_by.get(k, MISSING), py_by.get(k, MISSING))
                for k in ref_by | py_by
            }
            out = []
            for sub, (a, b) in keyed.items():
                out.extend(diff_values(a, b, sub) if MISSING not in (a, b) else [(sub, a, b)])
            order_a = [i[field] for i in reference if i[field] in py_by]
            order_b = [i[field] for i in olm_py if i[field] in ref_by]
            if order_a != order_b and field == "name":  # conditions (by type) have no order
                out.append((f"{path}[*order*]", order_a, order_b))
            return out
        if len(reference) != len(olm_py):
            return [(path, reference, olm_py)]
        out = []
        for index, (a, b) in enumerate(zip(reference, olm_py, strict=True)):
            out.extend(diff_values(a, b, f"{path}[{index}]"))
        return out
    if reference == olm_py:
        return []
    return [(path, reference, olm_py)]


def diff_snapshots(
    point: str, reference: Mapping[str, Obj], olm_py: Mapping[str, Obj]
) -> list[Difference]:
    """Field-by-field differences of two normalized snapshots (from `normalize`)."""
    out: list[Difference] = []
    for key in sorted(set(reference) | set(olm_py)):
        if key not in olm_py:
            out.append(Difference(point, key, "", "present", MISSING))
        elif key not in reference:
            out.append(Difference(point, key, "", MISSING, "present"))
        else:
            out.extend(
                Difference(point, key, path, a, b)
                for path, a, b in diff_values(reference[key], olm_py[key])
            )
    return out


def diff_runs(
    reference: Mapping[str, list[Obj]], olm_py: Mapping[str, list[Obj]]
) -> list[Difference]:
    """Both runs of one scenario (point -> raw objects) -> every difference, point by point."""
    out: list[Difference] = []
    for point in list(reference) + [p for p in olm_py if p not in reference]:
        if point not in olm_py or point not in reference:
            out.append(
                Difference(
                    point,
                    "*",
                    "",
                    "collected" if point in reference else MISSING,
                    "collected" if point in olm_py else MISSING,
                )
            )
            continue
        out.extend(diff_snapshots(point, normalize(reference[point]), normalize(olm_py[point])))
    return out
