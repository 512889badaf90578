"""What the resolver reasons about, as plain data (OLM v0 §5.3).

Invariants: a `Candidate` is one bundle of one catalog channel (a bundle in two channels is two
candidates that share a package and so exclude each other); an `Installed` CSV is what the
namespace already runs; a `Wanted` is one Subscription's request.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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

    @property
    def key(self) -> str:
        return f"{self.source.key}/{self.package}/{self.channel}/{self.bundle}"


@dataclass(frozen=True)
class Installed:
    csv: str
    package: str
    version: str
    provides: tuple[GVK, ...] = ()


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
    # subscription -> (VersionHeldReason, message), for each Subscription with a version range
    version_holds: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures
