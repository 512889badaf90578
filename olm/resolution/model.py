"""What the resolver reasons about, as plain data (OLM v0 §5.3).

Invariants: a `Candidate` is one bundle of one catalog channel (a bundle in two channels is two
candidates that share a package and so exclude each other); an `Installed` CSV is what the
namespace already runs; a `Wanted` is one Subscription's request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.resolution.constraints import Predicate, Subject


@dataclass(frozen=True)
class Source:
    """A catalog in scope: (namespace, name), with OLM's preference inputs."""

    name: str
    namespace: str
    priority: int = 0
    own_namespace: bool = True

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


GVK = tuple[str, str, str]  # (group, version, kind)


@dataclass(frozen=True)
class Candidate:
    bundle: str
    package: str
    channel: str
    source: Source
    version: str
    replaces: str = ""
    skips: tuple[str, ...] = ()
    skip_range: str = ""
    provides: tuple[GVK, ...] = ()
    requires_gvks: tuple[GVK, ...] = ()
    requires_packages: tuple[tuple[str, str], ...] = ()  # (package, semver range)
    default_channel: bool = False
    position: int = 0  # 0 is the channel head
    # Skipped by another entry of its channel (`skips`): OLM's dependency sort leaves such an
    # entry out of the channel's chain, so it never satisfies a dependency from that channel.
    skipped: bool = False
    # The bundle's `olm.constraint` dependencies, or OLM's error for the first bad one.
    constraints: tuple[Predicate, ...] = ()
    constraint_error: str = ""
    # All of the bundle's properties, as a CEL rule of another bundle's constraint sees them.
    properties: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.source.key}/{self.package}/{self.channel}/{self.bundle}"

    @property
    def subject(self) -> Subject:
        return Subject(self.package, self.version, self.properties)


@dataclass(frozen=True)
class Installed:
    csv: str
    package: str
    version: str
    provides: tuple[GVK, ...] = ()
    # The CSV's properties (its `operatorframework.io/properties` annotation, else inferred).
    properties: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def subject(self) -> Subject:
        return Subject(self.package, self.version, self.properties)


@dataclass(frozen=True)
class Wanted:
    """One Subscription."""

    name: str
    package: str
    source: str
    source_namespace: str
    channel: str = ""
    starting_csv: str = ""
    installed_csv: str = ""
    version_range: str = ""  # olm-py's olm-py.io/version-range annotation ("" without one)
    rollback_to: str = ""  # olm-py's olm-py.io/rollback-to annotation (`olm rollback`)


@dataclass
class Decision:
    """The resolver's answer: per Subscription the bundle to move to (or stay on), extra
    bundles to install for dependencies, and, when resolution fails, why in plain words."""

    chosen: dict[str, Candidate | Installed] = field(default_factory=dict)
    dependencies: list[Candidate] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # subscription -> explanation
    # subscription -> the error that stopped the namespace's resolution (OLM's
    # ErrorPreventedResolution: a bundle with a bad `olm.constraint`)
    errors: dict[str, str] = field(default_factory=dict)
    # subscription -> (VersionHeldReason, message), for each Subscription with a version range
    version_holds: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.errors
