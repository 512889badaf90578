"""What the corpus parity run does with each package: pure choices over the catalog model.

Per package (`plan`): its default channel; the channel head; a `startingCSV` two steps behind
the head on the replaces walk (else one, else the head itself); the install mode both the start
and the head support, in the order AllNamespaces, OwnNamespace, SingleNamespace,
MultiNamespace (a nearer start is taken when the farther one shares no mode with the head); a
namespace of its own, `pc-<package>`, and the OperatorGroup targets the mode needs.

Packages that share an API (an owned or required group/kind) or a package dependency would
see each other: OLM fails a second global owner of an API, and installs a dependency into the
dependent's namespace. `groups` puts such packages in one group; a group runs its packages one
after another (each cleaned up before the next), groups run side by side, in the same order on
both sides.

Invariants: pure (no cluster, no I/O); the same catalog gives the same plans and groups; every
package of the catalog gets exactly one plan, in exactly one group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olm.catalog.model import Bundle, Catalog, Package

MODES = ("AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace")
NAMESPACE_PREFIX = "pc-"
NAME_LIMIT = 63 - len("-added")


@dataclass(frozen=True)
class PackagePlan:
    package: str
    channel: str
    head: str
    starting: str  # == head when there is nothing to upgrade from
    mode: str  # one of MODES
    namespace: str
    targets: tuple[str, ...] | None  # the OperatorGroup's targetNamespaces; None = all
    owned_crds: tuple[str, ...] = ()
    required_crds: tuple[str, ...] = ()
    keys: frozenset[str] = field(default_factory=frozenset)  # what it shares with others

    @property
    def upgrades(self) -> bool:
        return self.starting != self.head

    @property
    def is_global(self) -> bool:
        return self.mode == "AllNamespaces"

    @property
    def extra_namespaces(self) -> tuple[str, ...]:
        """Namespaces the OperatorGroup targets besides the operator's own."""
        return tuple(t for t in self.targets or () if t != self.namespace)

    @property
    def added_namespace(self) -> str:
        """The namespace made after the install (global operators: copies land there)."""
        return f"{self.namespace}-added"


def supported_modes(bundle: Bundle | None) -> set[str]:
    csv = (bundle.csv if bundle is not None else None) or {}
    modes = (csv.get("spec") or {}).get("installModes") or []
    return {str(m.get("type")) for m in modes if isinstance(m, dict) and m.get("supported")}


def walk_back(package: Package, channel: str, head: str, steps: int) -> list[str]:
    """The head and up to `steps` entries it replaces, in the channel, nearest first."""
    entries = {e.name: e for e in package.channels[channel].entries}
    walked = [head]
    current = head
    while len(walked) <= steps:
        entry = entries.get(current)
        previous = entry.replaces if entry is not None else ""
        if not previous or previous not in entries or previous in walked:
            break
        if previous not in package.bundles:
            break
        walked.append(previous)
        current = previous
    return walked


def channel_head(package: Package, channel: str) -> str:
    entries = package.channels[channel].entries
    named = {e.replaces for e in entries} | {s for e in entries for s in e.skips}
    heads = [e.name for e in entries if e.name not in named]
    return heads[0] if len(heads) == 1 else (entries[-1].name if entries else "")


def namespace_for(package: str) -> str:
    return (NAMESPACE_PREFIX + package)[:NAME_LIMIT].rstrip("-")


def choose(package: Package, channel: str, head: str) -> tuple[str, str]:
    """(startingCSV, install mode): the farthest start (two steps back at most) sharing a mode
    with the head; the mode first in MODES among those both support."""
    head_modes = supported_modes(package.bundles.get(head))
    walked = walk_back(package, channel, head, 2)
    for start in reversed(walked):
        common = head_modes & supported_modes(package.bundles.get(start))
        for mode in MODES:
            if mode in common:
                return start, mode
    return head, "OwnNamespace"  # no mode at all: both sides fail it alike


def targets_for(mode: str, namespace: str) -> tuple[str, ...] | None:
    if mode == "AllNamespaces":
        return None
    if mode == "OwnNamespace":
        return (namespace,)
    if mode == "SingleNamespace":
        return (f"{namespace}-t",)
    return (f"{namespace}-m1", f"{namespace}-m2")


def _keys(package: Package) -> frozenset[str]:
    keys = {f"pkg:{package.name}"}
    for bundle in package.bundles.values():
        for value in bundle.props("olm.gvk") + bundle.props("olm.gvk.required"):
            if isinstance(value, dict):
                keys.add(f"gvk:{value.get('group', '')}/{value.get('kind', '')}")
        for value in bundle.props("olm.package.required"):
            if isinstance(value, dict):
                keys.add(f"pkg:{value.get('packageName', '')}")
    return frozenset(keys)


def _crd_names(package: Package, section: str) -> tuple[str, ...]:
    names: set[str] = set()
    for bundle in package.bundles.values():
        csv: dict[str, Any] = bundle.csv or {}
        crds = (csv.get("spec") or {}).get("customresourcedefinitions") or {}
        names.update(str(c.get("name")) for c in crds.get(section) or [] if c.get("name"))
        if section == "owned":
            names.update(
                str(o["metadata"]["name"])
                for o in bundle.objects
                if o.get("kind") == "CustomResourceDefinition" and o.get("metadata")
            )
    return tuple(sorted(names))


def plan(package: Package) -> PackagePlan:
    channel = package.default_channel or sorted(package.channels)[0]
    head = channel_head(package, channel)
    starting, mode = choose(package, channel, head)
    namespace = namespace_for(package.name)
    return PackagePlan(
        package=package.name,
        channel=channel,
        head=head,
        starting=starting,
        mode=mode,
        namespace=namespace,
        targets=targets_for(mode, namespace),
        owned_crds=_crd_names(package, "owned"),
        required_crds=_crd_names(package, "required"),
        keys=_keys(package),
    )


def plans(catalog: Catalog, only: list[str] | None = None) -> list[PackagePlan]:
    names = only or sorted(catalog.packages)
    return [plan(catalog.packages[name]) for name in names]


def groups(found: list[PackagePlan]) -> list[list[PackagePlan]]:
    """Packages sharing a key, transitively, in one group (in the plans' order); groups are
    ordered by their first package."""
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for index, item in enumerate(found):
        for key in sorted(item.keys):
            if key in owner:
                parent[root(index)] = root(owner[key])
            else:
                owner[key] = index
    by_root: dict[int, list[PackagePlan]] = {}
    for index, item in enumerate(found):
        by_root.setdefault(root(index), []).append(item)
    return sorted(by_root.values(), key=lambda g: found.index(g[0]))
