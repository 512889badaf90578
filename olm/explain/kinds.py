"""Which object `olm explain` is asked about: `<kind>/<name>` (or `<kind> <name>`), with the
names kubectl accepts for the kind.

The names come from the kinds table (`olm.api.kinds.KINDS`): the kind in lower case, its plural,
its short names, and each of those qualified by the API group (`subscriptions.operators.coreos.com`),
so they never drift from what `kubectl get` accepts. Only the five kinds `olm explain` reasons
about are accepted.

Invariant: pure; a refusal is a `UsageError` whose message says what is accepted.
"""

from __future__ import annotations

from olm.api.kinds import GROUP, KINDS, Kind

EXPLAINED = (
    Kind.SUBSCRIPTION,
    Kind.CLUSTER_SERVICE_VERSION,
    Kind.INSTALL_PLAN,
    Kind.OPERATOR_GROUP,
    Kind.CATALOG_SOURCE,
)


class UsageError(ValueError):
    """The request names no object `olm explain` can explain."""


def names_of(kind: Kind) -> tuple[str, ...]:
    """Every name kubectl accepts for `kind`, shortest first."""
    info = KINDS[kind]
    plain = {kind.value.lower(), info.plural, *info.short_names}
    qualified = {f"{n}.{GROUP}" for n in (kind.value.lower(), info.plural)}
    return tuple(sorted(plain | qualified, key=lambda n: (len(n), n)))


ALIASES: dict[str, Kind] = {alias: kind for kind in EXPLAINED for alias in names_of(kind)}


def accepted() -> str:
    """The accepted kind names, for a usage message."""
    return "; ".join(", ".join(names_of(kind)[:3]) for kind in EXPLAINED)


def parse_target(words: list[str]) -> tuple[Kind, str]:
    """(kind, name) from `["sub/memcached"]` or `["sub", "memcached"]`."""
    if len(words) == 1 and "/" in words[0]:
        kind_word, _, obj_name = words[0].partition("/")
    elif len(words) == 2 and "/" not in words[0]:
        kind_word, obj_name = words
    else:
        raise UsageError(
            "name one object as KIND/NAME, e.g. `olm explain subscription/memcached -n team-a`"
        )
    kind = ALIASES.get(kind_word.lower())
    if kind is None:
        raise UsageError(f"olm explain does not explain {kind_word!r}; it explains {accepted()}")
    if not obj_name or "/" in obj_name:
        raise UsageError(f"{kind_word}/{obj_name}: the name is missing or has a '/'")
    return kind, obj_name
