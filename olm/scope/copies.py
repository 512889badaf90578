"""Copied CSVs (OLM v0 `operatorgroup.go` csvCopyPrototype / ensureCSVsInNamespaces /
copyToNamespace, `operator.go` syncCopyCSV / removeDanglingChildCSVs).

A CSV whose OperatorGroup targets more than its own namespace is copied into every other
existing target namespace, so `kubectl get csv` there shows which operator manages it.

The copy (`copy_prototype`):
- same name, apiVersion and kind; the original's full `spec`;
- labels: the original's minus `operators.coreos.com/*`, plus `olm.copiedFrom=<origin ns>`;
- annotations: the original's minus `olm.targetNamespaces` and
  `kubectl.kubernetes.io/last-applied-configuration`, plus OLM's two copy hashes
  (`olm.operatorframework.io/nonStatusCopyHash`, `.../statusCopyHash`) so a metadata-only cache
  can tell whether a copy is in step;
- status: the original's, with `reason: Copied` and message "The operator is running in <ns>
  but is managing this namespace" (so the phase is mirrored);
- no ownerReferences, no finalizers: copies are never acted upon, only written and deleted.

Invariants:
- Pure; `plan_copies` over the same snapshot always returns the same plan, and a snapshot whose
  copies carry the current hashes yields no writes.
- Only CSVs OLM would copy are copied (`skip_reason`): not a copy itself, not being deleted,
  its group annotations in step with its group's `status.namespaces`, the targets not exactly
  its own namespace, and not uncopiable (phase "" or one of OLM's group-failure reasons).
- A copy is deleted when OLM's garbage collection would delete it (`dangling_reason`): its
  original is gone or in InterOperatorGroupOwnerConflict, or no longer targets its namespace.
- OLMConfig `spec.features.disableCopiedCSVs: true` removes the copies of AllNamespaces
  operators (except in the protected namespaces) and asks for a Warning Event on the original;
  turning it off brings them back and clears that Event (the toggle and its condition:
  `olm.scope.olmconfig`).
- Returned dicts share the original's `spec` (and nested status values) by reference, so a
  thousand copies cost one spec: treat them as read-only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.csv import CsvPhase, CsvReason
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Annotation, Label
from olm.api.scope import (
    COMPONENT_LABEL_PREFIX,
    COPIED_MESSAGE_TEMPLATE,
    DISABLED_COPIED_CSVS_EVENT_REASON,
    CopyAnnotation,
)
from olm.scope.namespaces import (
    build_target_namespaces,
    contains,
    from_annotation,
    is_all,
    is_own_namespace_only,
    status_namespaces,
)

CSV_INFO = KINDS[Kind.CLUSTER_SERVICE_VERSION]
WARNING = "Warning"

# Reasons that stop OLM from copying a CSV (operator-framework/api `uncopiableReasons`).
UNCOPIABLE_REASONS = frozenset(
    {
        CsvReason.COPIED,
        CsvReason.INVALID_INSTALL_MODES,
        CsvReason.NO_TARGET_NAMESPACES,
        CsvReason.UNSUPPORTED_OPERATOR_GROUP,
        CsvReason.NO_OPERATOR_GROUP,
        CsvReason.TOO_MANY_OPERATOR_GROUPS,
        CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT,
        CsvReason.CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS,
    }
)
# Annotations of the original a copy does not carry (the second one is big).
NOT_COPIED_ANNOTATIONS = frozenset({Annotation.TARGET_NAMESPACES, Annotation.LAST_APPLIED})


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Where a metadata-only cache entry of a copy keeps the digest of the copy's actual status (the
# same digest as its statusCopyHash annotation when nobody but olm-py wrote that status).
STATUS_DIGEST_KEY = "statusDigest"


def status_digest(copy: Mapping[str, Any]) -> str | None:
    """The digest of a copy's actual status: computed from a full object (one without a status,
    as a create leaves it, has an empty one), kept by a cache entry (`STATUS_DIGEST_KEY`); None
    when neither says."""
    if STATUS_DIGEST_KEY in copy:
        return str(copy[STATUS_DIGEST_KEY])
    status = copy.get("status")
    if isinstance(status, Mapping):
        return _digest(status)
    return _digest({}) if "spec" in copy else None


def status_edited(copy: Mapping[str, Any]) -> bool:
    """Whether someone other than olm-py wrote the copy's status: it is not the status its
    statusCopyHash annotation says olm-py wrote (OLM puts such a copy back in step)."""
    actual = status_digest(copy)
    written = (body.meta(copy).get("annotations") or {}).get(CopyAnnotation.STATUS_HASH)
    return actual is not None and written is not None and actual != written


@dataclass(frozen=True)
class CopyMeta:
    """What a metadata-only cache knows about an existing copied CSV."""

    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    status_edited: bool = False  # its status is not the one olm-py wrote (`status_edited`)

    @classmethod
    def of(cls, csv: Mapping[str, Any]) -> CopyMeta:
        meta = body.meta(csv)
        return cls(
            str(meta.get("namespace") or ""),
            str(meta.get("name") or ""),
            str(meta.get("uid") or ""),
            dict(meta.get("labels") or {}),
            dict(meta.get("annotations") or {}),
            status_edited(csv),
        )

    @property
    def is_copy(self) -> bool:
        """OLM's `IsCopied` on metadata: labelled `olm.copiedFrom`, or its
        `olm.operatorNamespace` annotation names another namespace."""
        operator_ns = self.annotations.get(Annotation.OPERATOR_NAMESPACE)
        return Label.COPIED_FROM in self.labels or (
            operator_ns is not None and operator_ns != self.namespace
        )


def is_copied(csv: Mapping[str, Any]) -> bool:
    """OLM's `ClusterServiceVersion.IsCopied`: status reason Copied, or copy metadata."""
    return (csv.get("status") or {}).get("reason") == CsvReason.COPIED or CopyMeta.of(csv).is_copy


def is_uncopiable(csv: Mapping[str, Any]) -> bool:
    status = csv.get("status") or {}
    return (status.get("phase") or "") == CsvPhase.NONE or status.get(
        "reason"
    ) in UNCOPIABLE_REASONS


@dataclass(frozen=True)
class CopyPrototype:
    """The copy of one original, namespace aside, and its two hashes."""

    name: str
    source_namespace: str
    api_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: Mapping[str, Any]
    status: Mapping[str, Any]
    spec_hash: str
    status_hash: str

    def body(self, namespace: str, *, with_status_hash: bool = True) -> dict[str, Any]:
        """The copy in `namespace`, without status (that goes through the status
        subresource)."""
        annotations = {**self.annotations, CopyAnnotation.NON_STATUS_HASH.value: self.spec_hash}
        if with_status_hash:
            annotations[CopyAnnotation.STATUS_HASH.value] = self.status_hash
        return {
            "apiVersion": self.api_version,
            "kind": CSV_INFO.kind.value,
            "metadata": {
                "name": self.name,
                "namespace": namespace,
                "labels": dict(self.labels),
                "annotations": annotations,
            },
            "spec": self.spec,
        }


def copied_status(original: Mapping[str, Any]) -> dict[str, Any]:
    """The status a copy of `original` shows: the original's, reason Copied and its message."""
    namespace = str(body.meta(original).get("namespace") or "")
    return {
        **(original.get("status") or {}),
        "reason": CsvReason.COPIED.value,
        "message": COPIED_MESSAGE_TEMPLATE.format(namespace=namespace),
    }


def copied_status_hash(original: Mapping[str, Any]) -> str:
    """`copy_prototype(original).status_hash`, without hashing the spec (cheap per event)."""
    return _digest(copied_status(original))


def copy_prototype(original: Mapping[str, Any]) -> CopyPrototype:
    meta = body.meta(original)
    namespace = str(meta.get("namespace") or "")
    labels = {
        str(k): str(v)
        for k, v in (meta.get("labels") or {}).items()
        if not str(k).startswith(COMPONENT_LABEL_PREFIX)
    }
    labels[Label.COPIED_FROM.value] = namespace
    annotations = {
        str(k): str(v)
        for k, v in (meta.get("annotations") or {}).items()
        if k not in NOT_COPIED_ANNOTATIONS and k not in set(CopyAnnotation)
    }
    status = copied_status(original)
    spec = original.get("spec") or {}
    name = str(meta.get("name") or "")
    return CopyPrototype(
        name=name,
        source_namespace=namespace,
        api_version=str(original.get("apiVersion") or CSV_INFO.api_version),
        labels=labels,
        annotations=annotations,
        spec=spec,
        status=status,
        spec_hash=_digest(
            {"name": name, "labels": labels, "annotations": annotations, "spec": spec}
        ),
        status_hash=_digest(status),
    )


def skip_reason(original: Mapping[str, Any], group: Mapping[str, Any] | None) -> str | None:
    """Why OLM would not copy `original` now, or None when it would (syncClusterServiceVersion
    and operatorGroupFromAnnotations)."""
    meta = body.meta(original)
    namespace = meta.get("namespace")
    annotations = meta.get("annotations") or {}
    if is_copied(original):
        return "it is a copy"
    if meta.get("deletionTimestamp"):
        return "it is being deleted"
    if group is None:
        return "its OperatorGroup is missing"
    targets = status_namespaces(group)
    if targets is None:
        return "its OperatorGroup has not computed status.namespaces yet"
    if (
        annotations.get(Annotation.OPERATOR_NAMESPACE) != namespace
        or annotations.get(Annotation.OPERATOR_GROUP) != body.meta(group).get("name")
        or annotations.get(Annotation.TARGET_NAMESPACES) != build_target_namespaces(targets)
    ):
        return "its OperatorGroup annotations are not in step with the group yet"
    if is_own_namespace_only(targets, str(namespace)):
        return "its OperatorGroup targets only its own namespace"
    if is_uncopiable(original):
        return "its phase or reason is one OLM does not copy"
    return None


def dangling_reason(copy: CopyMeta, parent: Mapping[str, Any] | None) -> str | None:
    """Why OLM's copied-CSV garbage collection deletes `copy`, or None to keep it.
    `parent` is the non-copied CSV of the same name in the copy's `olm.operatorNamespace`."""
    operator_ns = copy.annotations.get(Annotation.OPERATOR_NAMESPACE)
    if operator_ns is None:
        return "it has no olm.operatorNamespace annotation"
    if parent is None or body.meta(parent).get("deletionTimestamp"):
        return f"its original {operator_ns}/{copy.name} is gone"
    status = parent.get("status") or {}
    if (
        status.get("phase") == CsvPhase.FAILED
        and status.get("reason") == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT
    ):
        return "its original failed with InterOperatorGroupOwnerConflict"
    annotations = body.meta(parent).get("annotations")
    if annotations is not None and not contains(
        from_annotation(annotations.get(Annotation.TARGET_NAMESPACES)), copy.namespace
    ):
        return f"its original no longer targets namespace {copy.namespace}"
    if body.meta(parent).get("namespace") == copy.namespace:
        return "it sits in its original's namespace"
    return None


@dataclass(frozen=True)
class CopyWrite:
    """Create or bring up to date the copy in one namespace."""

    namespace: str
    create: bool
    body: dict[str, Any]  # metadata + spec, both copy hashes set
    status: dict[str, Any] | None  # to write through the status subresource, None if in step

    def steps(self) -> list[tuple[str, dict[str, Any]]]:
        """The writes, in order: ("apply", body) or ("status", status). A new copy is created
        with both hashes (one request fewer) and then given its status: until that status is
        written the copy has none, which `status_digest` reads as an empty one, not the one
        its hash records, so a failed status write is retried. An existing copy's status hash
        is recorded only after the status itself is written."""
        if self.create:
            return [("apply", self.body), ("status", self.status or {})]
        if self.status is not None:
            return [("status", self.status), ("apply", self.body)]
        return [("apply", self.body)]


@dataclass(frozen=True)
class CopySnapshot:
    """Everything `plan_copies` looks at, for one original CSV."""

    original: Mapping[str, Any]
    group: Mapping[str, Any] | None  # the original's OperatorGroup
    namespaces: Collection[str]  # namespaces a copy may be created in (existing, not terminating)
    copies: Mapping[str, CopyMeta]  # this CSV's existing copies, by namespace
    occupied: Collection[str] = ()  # namespaces holding a non-copied CSV of the same name
    copies_enabled: bool = True  # OLMConfig spec.features.disableCopiedCSVs is not true
    protected_namespaces: frozenset[str] = frozenset()  # --protectedCopiedCSVNamespaces
    # `copy_prototype(original)` computed earlier (callers cache it per resourceVersion, so
    # the hashes of a big spec are not recomputed for every namespace); None computes it.
    prototype: CopyPrototype | None = None


@dataclass
class CopyPlan:
    writes: list[CopyWrite] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)  # namespaces whose copy goes
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (namespace, message)
    disabled_event: tuple[str, str, str] | None = None  # (type, reason, message) on the original
    clear_disabled_events: bool = False  # delete the original's DisabledCopiedCSVs Events
    skipped: str | None = None  # why nothing is copied (None when copying)

    @property
    def empty(self) -> bool:
        return not (
            self.writes or self.deletes or self.disabled_event or self.clear_disabled_events
        )


def _write(proto: CopyPrototype, namespace: str, existing: CopyMeta | None) -> CopyWrite | None:
    body = proto.body(namespace)
    if existing is None:
        return CopyWrite(namespace, True, body, dict(proto.status))
    spec_stale = existing.annotations.get(CopyAnnotation.NON_STATUS_HASH) != proto.spec_hash
    status_stale = (
        existing.annotations.get(CopyAnnotation.STATUS_HASH) != proto.status_hash
        or existing.status_edited
    )
    if not (spec_stale or status_stale):
        return None
    return CopyWrite(namespace, False, body, dict(proto.status) if status_stale else None)


def _blocked_message(name: str, namespace: str, origin: str) -> str:
    return (
        f"ClusterServiceVersion {name} is also installed in namespace {namespace}, so its copy "
        f"from {origin} cannot be written there: remove one of the two installs, or take "
        f"{namespace} out of the OperatorGroup's targets"
    )


def plan_copies(snapshot: CopySnapshot) -> CopyPlan:
    """Which copies of one original to create, update and delete."""
    original = snapshot.original
    meta = body.meta(original)
    name, origin = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    plan = CopyPlan(skipped=skip_reason(original, snapshot.group))
    if is_copied(original):
        return plan
    for namespace, copy in sorted(snapshot.copies.items()):
        if dangling_reason(copy, original):
            plan.deletes.append(namespace)
    group = snapshot.group
    if plan.skipped is not None or group is None:
        return plan
    targets = frozenset(status_namespaces(group) or ())
    group_ns = str(body.meta(group).get("namespace") or origin)
    if snapshot.copies_enabled or not is_all(targets):
        wanted = {ns for ns in snapshot.namespaces if ns != group_ns and contains(targets, ns)}
        plan.clear_disabled_events = is_all(targets)
    else:
        wanted = {ns for ns in snapshot.namespaces if ns in snapshot.protected_namespaces}
        wanted.discard(origin)
        plan.deletes.extend(
            ns
            for ns in snapshot.copies
            if ns not in snapshot.protected_namespaces and ns not in plan.deletes
        )
        plan.disabled_event = (
            WARNING,
            DISABLED_COPIED_CSVS_EVENT_REASON,
            f"CSV copying disabled for {origin}/{name}",
        )
    proto = snapshot.prototype or copy_prototype(original)
    occupied = set(snapshot.occupied)
    for namespace in sorted(wanted):
        if namespace in occupied and namespace not in snapshot.copies:
            plan.blocked.append((namespace, _blocked_message(name, namespace, origin)))
            continue
        write = _write(proto, namespace, snapshot.copies.get(namespace))
        if write is not None:
            plan.writes.append(write)
    plan.deletes = sorted(set(plan.deletes))
    return plan
