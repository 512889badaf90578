"""Typed read-only views over a ClusterServiceVersion's raw dict, and the one ownerReference
builder.

OLM v0 reads the same CSV fields in many places: the owned and required CRDs and APIServices
(`spec.customresourcedefinitions`, `spec.apiservicedefinitions`), `spec.installModes`, the
install strategy's deployments and (cluster) permissions, `spec.replaces`, `spec.skips` and
`spec.version`. `CsvView.of(csv)` parses them once into frozen dataclasses so the rest of olm-py
never walks the nested dicts by hand.

Invariants:
- Views are lenient readers, never validators: a missing field reads as empty, an entry that
  is not an object is skipped, a scalar is read as its string form. Judging bad input (with the
  field path and the fix) is the job of the validators (`olm.install.strategy`,
  `olm.catalog.csvcheck`, `olm.csv.definitions`).
- Views never copy or change the raw dict; mappings they expose are the raw ones, typed
  read-only (`Mapping`). Code that wants to change one copies it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from olm.api.kinds import KindInfo


class InstallModeType(StrEnum):
    """`spec.installModes[].type`, as OLM v0 names them."""

    OWN_NAMESPACE = "OwnNamespace"
    SINGLE_NAMESPACE = "SingleNamespace"
    MULTI_NAMESPACE = "MultiNamespace"
    ALL_NAMESPACES = "AllNamespaces"


class Gvk(NamedTuple):
    group: str
    version: str
    kind: str

    @property
    def provided_api(self) -> str:
        """`Kind.version.group`, the form of the `olm.providedAPIs` annotation."""
        return f"{self.kind}.{self.version}.{self.group}"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The object entries of a list field; anything else reads as empty."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


@dataclass(frozen=True)
class CrdDescription:
    """One entry of `spec.customresourcedefinitions.owned|required`."""

    name: str  # <plural>.<group>
    version: str
    kind: str
    display_name: str = ""

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else ""

    @property
    def plural(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def gvk(self) -> Gvk:
        return Gvk(self.group, self.version, self.kind)

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> CrdDescription:
        return cls(
            _text(raw.get("name")),
            _text(raw.get("version")),
            _text(raw.get("kind")),
            _text(raw.get("displayName")),
        )


@dataclass(frozen=True)
class ApiServiceDescription:
    """One entry of `spec.apiservicedefinitions.owned|required`."""

    group: str
    version: str
    kind: str
    name: str = ""  # the plural resource name
    deployment_name: str = ""
    display_name: str = ""

    @property
    def gvk(self) -> Gvk:
        return Gvk(self.group, self.version, self.kind)

    @property
    def api_service_name(self) -> str:
        """The APIService object's name: `<version>.<group>`."""
        return f"{self.version}.{self.group}"

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> ApiServiceDescription:
        return cls(
            _text(raw.get("group")),
            _text(raw.get("version")),
            _text(raw.get("kind")),
            _text(raw.get("name")),
            _text(raw.get("deploymentName")),
            _text(raw.get("displayName")),
        )


@dataclass(frozen=True)
class InstallMode:
    type: str  # an InstallModeType when the CSV is valid; kept as written otherwise
    supported: bool


@dataclass(frozen=True)
class StrategyDeployment:
    """One entry of `spec.install.spec.deployments`."""

    name: str
    spec: Mapping[str, Any]
    labels: Mapping[str, Any]

    @property
    def pod_spec(self) -> Mapping[str, Any]:
        return _mapping(_mapping(self.spec.get("template")).get("spec"))

    @property
    def service_account(self) -> str:
        return _text(self.pod_spec.get("serviceAccountName"))

    @property
    def containers(self) -> list[Mapping[str, Any]]:
        """Containers, then init containers."""
        pod = self.pod_spec
        return _objects(pod.get("containers")) + _objects(pod.get("initContainers"))


@dataclass(frozen=True)
class StrategyPermission:
    """One entry of `spec.install.spec.permissions` (or `clusterPermissions`)."""

    service_account: str
    rules: tuple[Mapping[str, Any], ...]
    cluster_scoped: bool


@dataclass(frozen=True)
class Strategy:
    """A CSV's `deployment` install strategy: the Deployments to run and the rights of their
    ServiceAccounts. `CsvView.install_strategy` reads one leniently; `olm.install.strategy.
    parse_strategy` builds one only from a strategy it has checked."""

    deployments: list[StrategyDeployment]
    permissions: list[StrategyPermission]

    @property
    def service_accounts(self) -> tuple[str, ...]:
        """The ServiceAccounts the permissions name, sorted, once each."""
        return tuple(sorted({p.service_account for p in self.permissions if p.service_account}))


def _permissions(body: Mapping[str, Any]) -> tuple[StrategyPermission, ...]:
    return tuple(
        StrategyPermission(
            _text(entry.get("serviceAccountName")), tuple(_objects(entry.get("rules"))), cluster
        )
        for key, cluster in (("permissions", False), ("clusterPermissions", True))
        for entry in _objects(body.get(key))
    )


@dataclass(frozen=True)
class CsvView:
    """The fields of a CSV that OLM's decisions read, parsed once. Build it with `CsvView.of`."""

    name: str
    namespace: str
    uid: str
    version: str
    replaces: str
    skips: tuple[str, ...]
    annotations: Mapping[str, Any]
    owned_crds: tuple[CrdDescription, ...]
    required_crds: tuple[CrdDescription, ...]
    owned_api_services: tuple[ApiServiceDescription, ...]
    required_api_services: tuple[ApiServiceDescription, ...]
    install_modes: tuple[InstallMode, ...]
    strategy: str
    deployments: tuple[StrategyDeployment, ...]
    permissions: tuple[StrategyPermission, ...]

    @classmethod
    def of(cls, csv: Mapping[str, Any]) -> CsvView:
        meta, spec = _mapping(csv.get("metadata")), _mapping(csv.get("spec"))
        crds = _mapping(spec.get("customresourcedefinitions"))
        services = _mapping(spec.get("apiservicedefinitions"))
        install = _mapping(spec.get("install"))
        body = _mapping(install.get("spec"))
        skips = spec.get("skips")
        return cls(
            name=_text(meta.get("name")),
            namespace=_text(meta.get("namespace")),
            uid=_text(meta.get("uid")),
            version=_text(spec.get("version")),
            replaces=_text(spec.get("replaces")),
            skips=tuple(_text(s) for s in skips) if isinstance(skips, list) else (),
            annotations=_mapping(meta.get("annotations")),
            owned_crds=tuple(CrdDescription.of(c) for c in _objects(crds.get("owned"))),
            required_crds=tuple(CrdDescription.of(c) for c in _objects(crds.get("required"))),
            owned_api_services=tuple(
                ApiServiceDescription.of(s) for s in _objects(services.get("owned"))
            ),
            required_api_services=tuple(
                ApiServiceDescription.of(s) for s in _objects(services.get("required"))
            ),
            install_modes=tuple(
                InstallMode(_text(m.get("type")), bool(m.get("supported")))
                for m in _objects(spec.get("installModes"))
            ),
            strategy=_text(install.get("strategy")),
            deployments=tuple(
                StrategyDeployment(
                    _text(d.get("name")), _mapping(d.get("spec")), _mapping(d.get("label"))
                )
                for d in _objects(body.get("deployments"))
            ),
            permissions=_permissions(body),
        )

    @property
    def owned_crd_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.owned_crds)

    @property
    def required_crd_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.required_crds)

    @property
    def owned_gvks(self) -> frozenset[Gvk]:
        """Group/version/kind of every owned CRD and APIService."""
        return frozenset(
            [*(c.gvk for c in self.owned_crds), *(s.gvk for s in self.owned_api_services)]
        )

    @property
    def required_gvks(self) -> frozenset[Gvk]:
        return frozenset(
            [*(c.gvk for c in self.required_crds), *(s.gvk for s in self.required_api_services)]
        )

    def supports(self, mode: InstallModeType) -> bool:
        """True when `spec.installModes` marks `mode` supported (the last entry wins)."""
        supported = False
        for entry in self.install_modes:
            if entry.type == mode:
                supported = entry.supported
        return supported

    @property
    def install_strategy(self) -> Strategy:
        return Strategy(list(self.deployments), list(self.permissions))

    @property
    def service_accounts(self) -> tuple[str, ...]:
        """The ServiceAccounts the install strategy names in its permissions, sorted, once each."""
        return self.install_strategy.service_accounts


def owner_reference(
    owner: Mapping[str, Any],
    *,
    controller: bool = False,
    block_owner_deletion: bool = False,
    kind: KindInfo | None = None,
) -> dict[str, Any]:
    """An ownerReference to `owner` (OLM's default is non-controller and non-blocking).

    apiVersion and kind come from `owner`, or from `kind` when given (for objects that do not
    carry them, such as list items or a manifest still being rendered). A missing uid reads as
    "" (the InstallPlan fills it in once the owner exists).
    """
    meta = _mapping(owner.get("metadata"))
    if kind is not None:
        api_version, kind_name = kind.api_version, kind.kind.value
    else:
        api_version, kind_name = _text(owner.get("apiVersion")), _text(owner.get("kind"))
        if not api_version or not kind_name:
            raise ValueError(
                f"cannot reference {meta.get('name')!r} as an owner: it has no apiVersion/kind; "
                "pass kind=KINDS[Kind...]"
            )
    return {
        "apiVersion": api_version,
        "kind": kind_name,
        "name": _text(meta.get("name")),
        "uid": _text(meta.get("uid")),
        "controller": controller,
        "blockOwnerDeletion": block_owner_deletion,
    }
