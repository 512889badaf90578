"""Namespace resolution as OLM v0 does it (§5.3), on a SAT solver (python-sat), with every
failure explained in plain words from the solver's unsatisfiable core.

Constraints: each Subscription gets one of its candidates (OLM's order: startingCSV; else the
subscribed channel, or the default channel first, head first; for an installed CSV one upgrade
hop, nearest the head, or staying put); installed CSVs no Subscription refers to stay; each
chosen bundle's required packages and APIs are provided; at most one bundle per package and
one provider per API. Choices are made greedily in preference order with the solver checking
each, and bundles nobody needs are left out. One Subscription's failure does not stop the
others from resolving.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from olm.catalog.semver import SemverError, parse_range
from olm.resolution.constraints import Predicate
from olm.resolution.model import GVK, Candidate, Decision, Installed, Source, Wanted
from olm.resolution.versionrange import hold, restrict

if TYPE_CHECKING:
    from pysat.solvers import Solver

Choice = Candidate | Installed


@dataclass(frozen=True)
class Group:
    """One named set of clauses, switched on by a selector literal (for explanations)."""

    kind: str  # dependency | constraint | one-package | one-provider | installed | fixed
    subject: str
    detail: str


def _gvk_text(gvk: GVK) -> str:
    group, version, kind = gvk
    return f"{kind}.{version}.{group}" if group else f"{kind}.{version}"


def _name(choice: Choice) -> str:
    return choice.bundle if isinstance(choice, Candidate) else choice.csv


def _package_key(choice: Choice) -> str:
    """The package a choice counts in; an installed CSV of no package (applied by hand, without
    OLM's properties annotation) is one of its own, so only its APIs can conflict."""
    return choice.package or f"(ClusterServiceVersion {_name(choice)})"


def _in_range(version: str, expression: str) -> bool:
    try:
        return parse_range(expression).contains(version)
    except SemverError:
        return False


@dataclass(frozen=True)
class Requirement:
    """One dependency of a bundle: a required API, a required package (legacy properties) or a
    generic constraint (`olm.constraint`), each met by some installed CSV or bundle."""

    kind: str  # dependency | constraint
    detail: str
    gvk: GVK | None = None
    package: tuple[str, str] | None = None  # (package, semver range)
    constraint: Predicate | None = None

    def met_by(self, choice: Choice) -> bool:
        if self.gvk is not None:
            return self.gvk in choice.provides
        if self.package is not None:
            return choice.package == self.package[0] and _in_range(choice.version, self.package[1])
        return self.constraint is not None and self.constraint.test(choice.subject)


def requirements(candidate: Candidate) -> list[Requirement]:
    """The bundle's dependencies in OLM's order of its properties: APIs, packages, constraints."""
    found = [
        Requirement("dependency", f"API {_gvk_text(g)}", gvk=g) for g in candidate.requires_gvks
    ]
    found += [
        Requirement("dependency", f'package "{name}" ({spec})', package=(name, spec))
        for name, spec in candidate.requires_packages
    ]
    found += [Requirement("constraint", c.text, constraint=c) for c in candidate.constraints]
    return found


def _source_rank(
    candidate: Candidate, dependent: Candidate | None
) -> tuple[int, int, int, str, int, str, str, int]:
    """OLM's order of a dependency's providers (resolver.go sortBundles): the dependent's own
    catalog first, then by priority; within a catalog default channels first, then by package
    and channel name; within a channel from the head down."""
    source = candidate.source
    same = 0 if dependent is not None and dependent.source == source else 1
    return (
        same,
        -source.priority,
        0 if source.own_namespace else 1,
        source.key,
        0 if candidate.default_channel else 1,
        candidate.package,
        candidate.channel,
        candidate.position,
    )


class Resolver:
    def __init__(
        self,
        candidates: Iterable[Candidate],
        installed: Iterable[Installed],
        sources: Iterable[Source],
    ) -> None:
        self.candidates = list(candidates)
        self.installed = list(installed)
        self.sources = {s.key: s for s in sources}
        self.choices: list[Choice] = [*self.installed, *self.candidates]
        self.by_package: dict[str, list[Choice]] = defaultdict(list)
        for choice in self.choices:
            self.by_package[_package_key(choice)].append(choice)
        self.var: dict[str, int] = {}
        self._meeting: dict[Requirement, tuple[list[Installed], list[Candidate]]] = {}
        for choice in self.choices:
            self.var[self._key(choice)] = len(self.var) + 1

    def _key(self, choice: Choice) -> str:
        return choice.key if isinstance(choice, Candidate) else f"@existing/{choice.csv}"

    # ----- candidates of one Subscription -------------------------------------------------------

    def wanted_candidates(self, wanted: Wanted) -> tuple[list[Choice], str]:
        """The Subscription's options in preference order, or why it has none."""
        source_key = f"{wanted.source_namespace}/{wanted.source}"
        if source_key not in self.sources:
            return [], (
                f'its catalog source "{wanted.source}" in namespace "{wanted.source_namespace}" does not exist or is not '
                f"serving. Fix spec.source / spec.sourceNamespace (catalogs in scope: {', '.join(sorted(self.sources)) or 'none'})."
            )
        in_source = [
            c for c in self.candidates if c.source.key == source_key and c.package == wanted.package
        ]
        if not in_source:
            packages = sorted({c.package for c in self.candidates if c.source.key == source_key})
            return [], (
                f'catalog "{source_key}" has no package "{wanted.package}". Fix spec.name '
                f"(packages there: {', '.join(packages[:10]) or 'none'}{' ...' if len(packages) > 10 else ''})."
            )
        channels = sorted({c.channel for c in in_source})
        if wanted.channel and wanted.channel not in channels:
            return (
                [],
                f'package "{wanted.package}" in catalog "{source_key}" has no channel "{wanted.channel}". Fix spec.channel (channels: {", ".join(channels)}).',
            )
        pool = [c for c in in_source if not wanted.channel or c.channel == wanted.channel]
        installed = next((i for i in self.installed if i.csv == wanted.installed_csv), None)
        if wanted.rollback_to and installed is not None and installed.csv != wanted.rollback_to:
            return self._rollback(wanted, in_source)
        if wanted.version_range:  # olm-py's version range (beyond OLM)
            narrowed, reason = restrict(wanted, pool, installed is not None)
            if reason:
                return [], reason
            if narrowed is None and installed is not None:
                return [installed], ""
            pool = narrowed or []
        if installed is not None:
            hops = [
                c
                for c in pool
                if c.bundle != installed.csv
                and (
                    c.replaces == installed.csv
                    or installed.csv in c.skips
                    or (c.skip_range and _in_range(installed.version, c.skip_range))
                )
            ]
            hops.sort(key=lambda c: (0 if c.default_channel else 1, c.channel, c.position))
            return [*hops, installed], ""
        if wanted.starting_csv:
            chosen = [c for c in pool if c.bundle == wanted.starting_csv]
            if not chosen:
                where = f'channel "{wanted.channel}"' if wanted.channel else "any channel"
                return (
                    [],
                    f'no operators found with name "{wanted.starting_csv}" in {where} of package "{wanted.package}" in catalog "{source_key}". Fix spec.startingCSV.',
                )
            return list[Choice](chosen), ""
        pool.sort(key=lambda c: (0 if c.default_channel else 1, c.channel, c.position))
        return list(pool), ""

    # ----- the SAT problem ----------------------------------------------------------------------

    def _providers(self, dependent: Candidate, requirement: Requirement) -> list[Choice]:
        """What satisfies one requirement of `dependent`: installed CSVs first, then bundles in
        OLM's preference order (its own catalog first, then by priority, ...); an entry its
        channel skips is no provider from that channel (OLM's sortChannel drops it)."""
        if requirement not in self._meeting:  # bundles sharing a requirement test it once
            self._meeting[requirement] = (
                [i for i in self.installed if requirement.met_by(i)],
                [c for c in self.candidates if not c.skipped and requirement.met_by(c)],
            )
        found, matches = self._meeting[requirement]
        return [*found, *sorted(matches, key=lambda c: _source_rank(c, dependent))]

    def _reachable_errors(self, options: Iterable[Choice]) -> list[str]:
        """OLM's errors for bad `olm.constraint`s among the bundles its resolution would visit:
        the Subscriptions' options and, transitively, whatever could satisfy their needs."""
        seen: set[str] = set()
        stack = [o for o in options if isinstance(o, Candidate)]
        errors: list[str] = []
        while stack:
            candidate = stack.pop()
            if candidate.key in seen:
                continue
            seen.add(candidate.key)
            if candidate.constraint_error:
                errors.append(candidate.constraint_error)
                continue
            for requirement in requirements(candidate):
                providers = self._providers(candidate, requirement)
                stack.extend(p for p in providers if isinstance(p, Candidate))
        return list(dict.fromkeys(errors))

    def _build(self, solver: Solver, referenced: set[str]) -> dict[int, Group]:
        groups: dict[int, Group] = {}
        next_selector = len(self.var) + 1

        def add(group: Group, clauses: list[list[int]]) -> None:
            nonlocal next_selector
            selector = next_selector
            next_selector += 1
            groups[selector] = group
            for clause in clauses:
                solver.add_clause([*clause, -selector])

        for installed in self.installed:
            if installed.csv not in referenced:
                add(
                    Group("installed", installed.csv, installed.package),
                    [[self.var[self._key(installed)]]],
                )
        for candidate in self.candidates:
            me = self.var[self._key(candidate)]
            for requirement in requirements(candidate):
                options = [self.var[self._key(p)] for p in self._providers(candidate, requirement)]
                add(
                    Group(requirement.kind, candidate.bundle, requirement.detail), [[-me, *options]]
                )
        for package_name, members in self.by_package.items():
            lits = [self.var[self._key(m)] for m in members]
            if len(lits) > 1:
                add(
                    Group(
                        "one-package", package_name, ", ".join(sorted({_name(m) for m in members}))
                    ),
                    [[-a, -b] for i, a in enumerate(lits) for b in lits[i + 1 :]],
                )
        providers: dict[GVK, list[Choice]] = defaultdict(list)
        for choice in self.choices:
            for gvk in choice.provides:
                providers[gvk].append(choice)
        for gvk, members in providers.items():
            by_package: dict[str, list[int]] = defaultdict(list)
            for member in members:
                by_package[_package_key(member)].append(self.var[self._key(member)])
            packages = list(by_package)
            clauses = [
                [-a, -b]
                for i, p in enumerate(packages)
                for q in packages[i + 1 :]
                for a in by_package[p]
                for b in by_package[q]
            ]
            if clauses:
                add(
                    Group(
                        "one-provider",
                        _gvk_text(gvk),
                        ", ".join(sorted({_package_key(m) for m in members})),
                    ),
                    clauses,
                )
        return groups

    # ----- solving --------------------------------------------------------------------------------

    def resolve(self, wanted: list[Wanted]) -> Decision:
        decision = Decision()
        referenced = {w.installed_csv for w in wanted if w.installed_csv}
        options_of = {w.name: self.wanted_candidates(w) for w in wanted}
        errors = self._reachable_errors(o for options, _ in options_of.values() for o in options)
        if errors:  # OLM: the namespace's resolution stops, every Subscription says why
            message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
            decision.errors = {w.name: message for w in wanted}
            return decision
        # Imported on first use: a cluster without Subscriptions never loads the SAT solver.
        from pysat.solvers import Solver

        with Solver(name="g4") as solver:
            groups = self._build(solver, referenced)
            selectors = list(groups)
            fixed: list[int] = []
            for subscription in wanted:
                options, reason = options_of[subscription.name]
                if not options:
                    decision.failures[subscription.name] = (
                        f"Subscription {subscription.name} cannot be resolved: {reason}"
                    )
                    continue
                for option in options:
                    literal = self.var[self._key(option)]
                    if solver.solve(assumptions=[*selectors, *fixed, literal]):
                        fixed.append(literal)
                        decision.chosen[subscription.name] = option
                        break
                else:
                    solver.solve(assumptions=[*selectors, *fixed, self.var[self._key(options[0])]])
                    core = set(solver.get_core() or [])
                    decision.failures[subscription.name] = self._explain(
                        subscription, options[0], [groups[s] for s in selectors if s in core], fixed
                    )
            if not solver.solve(assumptions=[*selectors, *fixed]):
                return decision
            # Dependencies: prefer what is installed, then the dependent's own catalog, ...;
            # then leave out every bundle nobody needs.
            keys = {v: k for k, v in self.var.items()}
            by_var = {self.var[self._key(c)]: c for c in self.choices}
            changed = True
            while changed:
                changed = False
                for literal in list(fixed):
                    chosen = by_var[literal]
                    if not isinstance(chosen, Candidate):
                        continue
                    for requirement in requirements(chosen):
                        providers = [
                            self.var[self._key(p)] for p in self._providers(chosen, requirement)
                        ]
                        if any(p in fixed for p in providers):
                            continue
                        for provider in providers:
                            if solver.solve(assumptions=[*selectors, *fixed, provider]):
                                fixed.append(provider)
                                changed = True
                                break
            final = [*fixed]
            # Leave out everything nobody asked for: in one call when possible (the usual
            # case), else one variable at a time.
            others = [-v for v in range(1, len(self.var) + 1) if v not in fixed]
            if solver.solve(assumptions=[*selectors, *final, *others]):
                final += others
            else:
                for literal in others:
                    if solver.solve(assumptions=[*selectors, *final, literal]):
                        final.append(literal)
            solver.solve(assumptions=[*selectors, *final])
            chosen_now = {v for v in (solver.get_model() or []) if v > 0 and v in keys}
        for subscription in wanted:
            held_to = decision.chosen.get(subscription.name)
            if subscription.version_range and held_to is not None:
                channel = self._channel_pool(subscription)
                decision.version_holds[subscription.name] = hold(subscription, held_to, channel)
        named = {self._key(c) for c in decision.chosen.values()}
        for variable in sorted(chosen_now):
            choice = by_var[variable]
            if isinstance(choice, Candidate) and self._key(choice) not in named:
                decision.dependencies.append(choice)
        return decision

    def _rollback(self, wanted: Wanted, in_source: list[Candidate]) -> tuple[list[Choice], str]:
        """`olm rollback`: the named earlier bundle of the package, from any channel of the
        catalog (the subscribed one first), whatever the version range says."""
        found = sorted(
            (c for c in in_source if c.bundle == wanted.rollback_to),
            key=lambda c: (c.channel != wanted.channel, not c.default_channel, c.channel),
        )
        if found:
            return [found[0]], ""
        return [], (
            f"the rollback target {wanted.rollback_to} is in no channel of package "
            f'"{wanted.package}" in catalog "{wanted.source_namespace}/{wanted.source}", so it '
            "cannot be installed again. Name a CSV the catalog has: olm rollback "
            f"{wanted.name} -n NAMESPACE --to CSV"
        )

    def _channel_pool(self, wanted: Wanted) -> list[Candidate]:
        """The bundles of the Subscription's package and catalog, in its channel if it names one."""
        source_key = f"{wanted.source_namespace}/{wanted.source}"
        return [
            c
            for c in self.candidates
            if c.source.key == source_key
            and c.package == wanted.package
            and (not wanted.channel or c.channel == wanted.channel)
        ]

    def _explain(
        self, wanted: Wanted, preferred: Choice, core: list[Group], fixed: list[int]
    ) -> str:
        """Plain words for why `wanted` cannot have its preferred option."""
        subject = f"Subscription {wanted.name} (package {wanted.package})"
        name = _name(preferred)
        reasons, fixes = [], []
        for group in core:
            if group.kind == "constraint":
                reasons.append(f"bundle {group.subject} requires an operator {group.detail}")
                fixes.append(
                    "add a CatalogSource with a bundle that satisfies it, or subscribe to a bundle that does not need it"
                )
            elif group.kind == "dependency":
                reasons.append(
                    f"bundle {group.subject} requires {group.detail}, and no catalog in scope provides it in a way that fits"
                )
                fixes.append(
                    f"add a CatalogSource that provides {group.detail}, or subscribe to a bundle that does not need it"
                )
            elif group.kind == "installed":
                reasons.append(
                    f"ClusterServiceVersion {group.subject}"
                    + (f" (package {group.detail})" if group.detail else "")
                    + " is already installed here and no Subscription refers to it, so it must stay"
                )
                fixes.append(
                    f"delete ClusterServiceVersion {group.subject}, or subscribe to it (spec.startingCSV: {group.subject}) so it can be upgraded"
                )
            elif group.kind == "one-provider":
                reasons.append(
                    f"only one operator per namespace may provide API {group.subject}, and it is provided by: {group.detail}"
                )
                fixes.append(
                    f"keep only one of {group.detail} in this namespace (install the other in another namespace)"
                )
            elif group.kind == "one-package":
                reasons.append(
                    f"only one bundle of package {group.subject} can be installed at a time ({group.detail})"
                )
        if not reasons:
            reasons.append(
                f"{name} conflicts with what the other Subscriptions of this namespace need"
            )
            fixes.append("review the other Subscriptions in this namespace")
        unique_fixes = list(dict.fromkeys(fixes))
        text = (
            f"{subject} cannot be resolved: it wants {name}, but "
            + "; ".join(dict.fromkeys(reasons))
            + "."
        )
        return text + (" Fix: " + "; or ".join(unique_fixes) + "." if unique_fixes else "")
