"""Catalog trust: which namespaces may hold CatalogSources olm-py uses, and of which kinds.

Under OLM v0 whoever may create a CatalogSource in a namespace decides what that namespace
installs: a `spec.address` or `spec.configMap` catalog is whatever its author serves
(operator-lifecycle-manager#1685). `olm run --trusted-catalogs SPEC` (off by default: then
every CatalogSource is used, as under OLM) names the namespaces whose catalogs olm-py uses and
the kinds each may use:

    SPEC   = ENTRY[,ENTRY...]          (the flag may also be given several times)
    ENTRY  = NAMESPACE[=KINDS]         (no KINDS: every kind)
    KINDS  = KIND[+KIND...]            KIND: image (spec.image), address (spec.address),
                                       configmap (spec.configMap, sourceType configmap/internal)
    NAMESPACE = a namespace name, or * for every namespace

e.g. `--trusted-catalogs olm=image+address,team-a=image`. Entries for the same namespace add
up; `*` entries apply to every namespace on top of its own.

Invariants: pure (no kopf, no kubernetes); `parse` accepts exactly the grammar above and says
what is wrong with anything else, naming the entry and the fix; `refusal` is None whenever the
setting is off or the catalog is trusted, else one sentence that names the setting as given,
the namespace, the kind, and what to change; a spec that asks for nothing readable
(SpecInvalid) is refused only when its namespace trusts no kind at all (otherwise its own
SpecInvalidError says more).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from olm.api import body
from olm.catalogsource.source import ReadConfigMap, ReadImage, ReadRegistry, what_to_read

FLAG = "--trusted-catalogs"
CHART_VALUE = "trustedCatalogs"
ANY_NAMESPACE = "*"
# A namespace name (RFC 1123 label), as the API server accepts it.
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class CatalogKind(StrEnum):
    """What a CatalogSource makes olm-py read (the field that decides it)."""

    IMAGE = "image"
    ADDRESS = "address"
    CONFIGMAP = "configmap"


FIELD = {
    CatalogKind.IMAGE: "spec.image",
    CatalogKind.ADDRESS: "spec.address",
    CatalogKind.CONFIGMAP: "spec.configMap",
}
ALL_KINDS = frozenset(CatalogKind)
_ORDER = {kind.value: i for i, kind in enumerate(CatalogKind)}


class TrustSpecError(ValueError):
    """A --trusted-catalogs value that does not follow the grammar; the text says the fix."""


def _kinds_text(kinds: Iterable[CatalogKind]) -> str:
    return "+".join(sorted((k.value for k in kinds), key=_ORDER.__getitem__))


@dataclass(frozen=True)
class CatalogTrust:
    """The parsed setting: namespace (or `*`) -> the kinds its CatalogSources may use."""

    rules: Mapping[str, frozenset[CatalogKind]]

    def allowed(self, namespace: str) -> frozenset[CatalogKind]:
        return self.rules.get(namespace, frozenset()) | self.rules.get(ANY_NAMESPACE, frozenset())

    def trusts(self, namespace: str, kind: CatalogKind) -> bool:
        return kind in self.allowed(namespace)

    def namespaces_for(self, kind: CatalogKind) -> list[str]:
        """The namespaces named for `kind` (not `*`), sorted: where a user may look instead."""
        return sorted(n for n, k in self.rules.items() if kind in k and n != ANY_NAMESPACE)

    def render(self) -> str:
        """The setting in its canonical spelling (as messages and the log show it)."""
        entries = []
        for namespace in sorted(self.rules, key=lambda n: (n != ANY_NAMESPACE, n)):
            kinds = self.rules[namespace]
            entries.append(namespace if kinds == ALL_KINDS else f"{namespace}={_kinds_text(kinds)}")
        return ",".join(entries)


def parse(values: Iterable[str]) -> CatalogTrust | None:
    """The setting from each --trusted-catalogs value (None when none was given: off)."""
    given = list(values)
    if not given:
        return None
    rules: dict[str, frozenset[CatalogKind]] = {}
    for value in given:
        entries = [e.strip() for e in value.split(",")]
        if not any(entries):
            raise TrustSpecError(
                f"{FLAG} {value!r} names no namespace: give NAMESPACE[=KINDS] entries, e.g. "
                f"{FLAG} olm=image+address,team-a=image (leave the flag out to use every "
                "catalog, as OLM does)"
            )
        for entry in entries:
            if not entry:
                raise TrustSpecError(f"{FLAG} {value!r} has an empty entry: remove the extra comma")
            namespace, sep, kinds_text = (part.strip() for part in entry.partition("="))
            if namespace != ANY_NAMESPACE and not _NAMESPACE.fullmatch(namespace):
                raise TrustSpecError(
                    f"{FLAG} entry {entry!r}: {namespace!r} is not a namespace name (lower-case "
                    f"letters, digits and '-') nor {ANY_NAMESPACE} (every namespace)"
                )
            kinds = _parse_kinds(entry, kinds_text) if sep else ALL_KINDS
            rules[namespace] = rules.get(namespace, frozenset()) | kinds
    return CatalogTrust(rules)


def _parse_kinds(entry: str, text: str) -> frozenset[CatalogKind]:
    names = [k.strip() for k in text.split("+")]
    known = ", ".join(k.value for k in CatalogKind)
    if not any(names):
        raise TrustSpecError(
            f"{FLAG} entry {entry!r} names no kind after '=': give KIND[+KIND...] from {known}, "
            "or leave out '=' to trust every kind"
        )
    kinds = set()
    for name in names:
        try:
            kinds.add(CatalogKind(name.lower()))
        except ValueError:
            raise TrustSpecError(
                f"{FLAG} entry {entry!r}: {name!r} is not a catalog kind; the kinds are {known} "
                "(spec.image, spec.address, spec.configMap), joined with '+'"
            ) from None
    return frozenset(kinds)


def kind_of(source: Mapping[str, Any]) -> CatalogKind | None:
    """The kind of catalog a CatalogSource makes olm-py read, None for a spec that asks for
    nothing readable. `spec.address` wins over `spec.image`, as it does when reading."""
    read = what_to_read(source)
    if isinstance(read, ReadRegistry):
        return CatalogKind.ADDRESS
    if isinstance(read, ReadImage):
        return CatalogKind.IMAGE
    if isinstance(read, ReadConfigMap):
        return CatalogKind.CONFIGMAP
    return None


def refusal(trust: CatalogTrust | None, source: Mapping[str, Any]) -> str | None:
    """Why olm-py does not use this CatalogSource (a clause, no final period), or None."""
    if trust is None:
        return None
    namespace = body.namespace(source)
    kind = kind_of(source)
    allowed = trust.allowed(namespace)
    if allowed and (kind is None or kind in allowed):
        return None
    setting = f"olm-py runs with {FLAG} {trust.render()}"
    if kind is None:  # nothing to read, and nothing would be trusted here anyway
        return (
            f"no CatalogSource in namespace {namespace} is trusted ({setting}); ask the cluster "
            f"admin to add {namespace}=KIND to {FLAG} (chart value {CHART_VALUE})"
        )
    what = f"catalog kind {kind.value} ({FIELD[kind]})"
    if allowed:
        where = f"namespace {namespace} may use only {_kinds_text(allowed)}"
    else:
        where = f"no catalog in namespace {namespace} is trusted"
    elsewhere = trust.namespaces_for(kind)
    instead = f", or use a catalog from namespace {' or '.join(elsewhere)}" if elsewhere else ""
    return (
        f"{what} is not trusted in namespace {namespace}: {where} ({setting}); ask the cluster "
        f"admin to add {namespace}={kind.value} to {FLAG} (chart value {CHART_VALUE}){instead}"
    )


def announce(
    trust: CatalogTrust, samples_namespace: str | None, samples_name: str = "samples"
) -> tuple[str, str | None]:
    """What `olm run` logs when it starts with the setting on, and a warning when the samples
    catalog it registers (an address catalog in `samples_namespace`) will not be used."""
    said = f"catalog trust on: only these CatalogSources are used: {FLAG} {trust.render()}"
    if samples_namespace is None or trust.trusts(samples_namespace, CatalogKind.ADDRESS):
        return said, None
    return said, (
        f"the samples catalog {samples_namespace}/{samples_name} is an address catalog, which "
        f"{FLAG} {trust.render()} does not trust: add {samples_namespace}=address to use it, "
        "or run with --no-samples"
    )
