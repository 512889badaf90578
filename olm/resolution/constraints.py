"""Generic constraints: `olm.constraint` properties as OLM v0.38 resolves them.

A bundle's `olm.constraint` property is a dependency, like `olm.gvk.required` and
`olm.package.required`: some bundle of the namespace must satisfy it. Its value (operator-
framework/api `pkg/constraints/constraint.go`) holds exactly one of `gvk` {group, version, kind},
`package` {packageName, versionRange}, `cel` {rule}, or `all` / `any` / `not` {constraints: [...]},
plus an optional `failureMessage`; unknown fields are refused, as OLM's decoder refuses them.
Nested constraints compose as OLM's predicates do (`cache/predicates.go`): `all` is AND (true when
empty), `any` is OR (false when empty), `not` is NOR of its members.

A CEL rule sees one variable, `properties`: the *candidate* bundle's properties as a list of
{"type", "value"} maps (the bundle that would satisfy the dependency, not the one declaring it),
and one function beyond the CEL standard ones, `semver_compare(a, b)` (-1, 0 or 1, blang's
`ParseTolerant` then `Compare`). A rule is checked when the constraint is read: a syntax error,
a call to an undeclared function or a result that is not a boolean makes the constraint invalid
(OLM's `Validate`); an error while evaluating it against one bundle makes it false for that
bundle (OLM's `celPredicate.Test`).

Invariants: parsing never raises; a bad constraint gives `ConstraintError` with OLM's message
("parse olm.constraint: ..." / "convert olm.constraint to resolver predicate: ..."), which fails
the namespace's resolution (ErrorPreventedResolution in OLM). `Predicate.text` is OLM's
`String()` of the predicate, used in "bundle X requires an operator ..." messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from olm.catalog.semver import SemverError, parse_range, parse_tolerant, parse_version

if TYPE_CHECKING:
    import cel

CONSTRAINT = "olm.constraint"
# OLM's maxConstraintSize (2 << 16 bytes of the raw property value).
MAX_CONSTRAINT_SIZE = 2 << 16
_FIELDS = ("failureMessage", "cel", "package", "gvk", "all", "any", "not")
# The kinds in the order OLM's convertConstraints tries them when several are set.
_KINDS = ("gvk", "package", "all", "any", "not", "cel")
_SHAPES = {
    "cel": ("rule",),
    "package": ("packageName", "versionRange"),
    "gvk": ("group", "kind", "version"),
    "all": ("constraints",),
    "any": ("constraints",),
    "not": ("constraints",),
}
# CEL's standard functions (cel-go's default environment, which OLM's extends with only
# semver_compare). Operators are named with `_`, `@` or `!` and are always declared.
_STANDARD_FUNCTIONS = frozenset(
    [
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "type",
        "dyn",
        "duration",
        "timestamp",
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
        "has",
        "semver_compare",
    ]
)


class ConstraintError(ValueError):
    """An `olm.constraint` OLM refuses to read; the message is OLM's."""


@dataclass(frozen=True)
class Subject:
    """What a predicate is tested against: one bundle (or installed CSV) of the namespace."""

    package: str
    version: str
    properties: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Predicate:
    """One (possibly compound) generic constraint, ready to test bundles."""

    kind: str  # gvk | package | all | any | not | cel
    gvk: tuple[str, str, str] = ("", "", "")
    package: str = ""
    version_range: str = ""
    rule: str = ""
    failure_message: str = ""
    members: tuple[Predicate, ...] = ()

    def test(self, subject: Subject) -> bool:
        if self.kind == "gvk":
            return any(_gvk_of(v) == self.gvk for v in _values(subject, "olm.gvk"))
        if self.kind == "package":
            return _has_package(subject, self.package) and _in_range(subject, self.version_range)
        if self.kind == "all":
            return all(m.test(subject) for m in self.members)
        if self.kind == "any":
            return any(m.test(subject) for m in self.members)
        if self.kind == "not":
            return not any(m.test(subject) for m in self.members)
        return evaluate(self.rule, subject.properties)

    @property
    def text(self) -> str:
        """OLM's `String()` of this predicate (`cache/predicates.go`), quirks included: a
        `not` prints its members joined by " and not ", with no leading "not"."""
        if self.kind == "gvk":
            group, version, kind = self.gvk
            return f"providing an API with group: {group}, version: {version}, kind: {kind}"
        if self.kind == "package":
            return f"with package: {self.package} and with version in range: {self.version_range}"
        if self.kind in ("all", "any", "not"):
            joiner = {"all": " and ", "any": " or ", "not": " and not "}[self.kind]
            return joiner.join(m.text for m in self.members)
        return f"with constraint: {_quote(self.rule)} and message: {_quote(self.failure_message)}"


def _quote(text: str) -> str:
    """Go's %q for the usual strings."""
    return json.dumps(text, ensure_ascii=False)


def _values(subject: Subject, kind: str) -> list[Any]:
    return [p.get("value") for p in subject.properties if p.get("type") == kind]


def _gvk_of(value: Any) -> tuple[str, str, str] | None:
    if not isinstance(value, Mapping):
        return None
    return (str(value.get("group", "")), str(value.get("version", "")), str(value.get("kind", "")))


def _has_package(subject: Subject, name: str) -> bool:
    named = (
        v.get("packageName") for v in _values(subject, "olm.package") if isinstance(v, Mapping)
    )
    return name in named or subject.package == name


def _in_range(subject: Subject, expression: str) -> bool:
    matches = parse_range(expression).contains
    for value in _values(subject, "olm.package"):
        try:
            if isinstance(value, Mapping) and matches(str(parse_version(str(value["version"])))):
                return True
        except (KeyError, SemverError):
            continue
    try:
        return matches(subject.version)
    except SemverError:
        return False


# ----- reading a property ---------------------------------------------------------------------


def parse(value: Any) -> Predicate:
    """The predicate of one `olm.constraint` property value, or ConstraintError."""
    if len(json.dumps(value)) > MAX_CONSTRAINT_SIZE:
        raise ConstraintError(
            "parse olm.constraint: olm.constraint value is greater than max constraint size "
            f"{MAX_CONSTRAINT_SIZE} bytes"
        )
    try:
        _check_shape(value, _FIELDS)
    except ConstraintError as error:
        raise ConstraintError(f"parse olm.constraint: {error}") from None
    try:
        return _convert(value)
    except (ConstraintError, SemverError) as error:
        raise ConstraintError(f"convert olm.constraint to resolver predicate: {error}") from None


def _check_shape(value: Any, fields: Sequence[str]) -> None:
    """OLM decodes with DisallowUnknownFields: every object has only its known fields."""
    if not isinstance(value, Mapping):
        raise ConstraintError(f"json: cannot unmarshal {_json_kind(value)} into an object")
    for key in value:
        if key not in fields:
            raise ConstraintError(f'json: unknown field "{key}"')
    for key, shape in _SHAPES.items():
        inner = value.get(key)
        if inner is None:
            continue
        _check_shape(inner, shape)
        if key in ("all", "any", "not"):
            members = inner.get("constraints") or []
            if not isinstance(members, list):
                raise ConstraintError(f"json: cannot unmarshal {_json_kind(members)} into a list")
            for member in members:
                _check_shape(member, _FIELDS)
        else:
            for field_name in shape:
                if not isinstance(inner.get(field_name, ""), str):
                    kind = _json_kind(inner[field_name])
                    raise ConstraintError(f"json: cannot unmarshal {kind} into a string")
    if not isinstance(value.get("failureMessage", ""), str):
        raise ConstraintError("json: cannot unmarshal failureMessage into a string")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else "null"


def _convert(value: Mapping[str, Any]) -> Predicate:
    kind = next((k for k in _KINDS if value.get(k) is not None), None)
    if kind is None:
        raise ConstraintError("constraint is empty")
    inner: Mapping[str, Any] = value[kind]
    if kind == "gvk":
        return Predicate(
            "gvk", gvk=(inner.get("group", ""), inner.get("version", ""), inner.get("kind", ""))
        )
    if kind == "package":
        version_range = str(inner.get("versionRange", ""))
        parse_range(version_range)  # a bad range fails the constraint, as in OLM
        return Predicate(
            "package", package=inner.get("packageName", ""), version_range=version_range
        )
    if kind == "cel":
        rule = str(inner.get("rule", ""))
        validate(rule)
        return Predicate("cel", rule=rule, failure_message=value.get("failureMessage", ""))
    members = tuple(_convert(m) for m in inner.get("constraints") or [])
    return Predicate(kind, members=members)


# ----- CEL --------------------------------------------------------------------------------------


def _go_text(value: Any) -> str:
    """Go's fmt.Sprint of a decoded JSON value, for the values a rule passes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def semver_compare(first: Any, second: Any) -> int:
    """OLM's CEL function: blang's ParseTolerant of both, then Compare (-1, 0, 1)."""
    left, right = parse_tolerant(_go_text(first)), parse_tolerant(_go_text(second))
    return left.compare(right)


@lru_cache(maxsize=1024)
def _compiled(rule: str) -> cel.Program:
    # Imported on first use: the CEL library brings its command line (prompt_toolkit, rich,
    # typer; about 12 MiB resident) and few catalogs have a CEL constraint.
    import cel

    return cel.compile(rule)


def validate(rule: str) -> None:
    """OLM's CelEnvironment.Validate: the rule parses, calls only declared functions and gives a
    boolean (checked on a bundle with no properties, where the result does not fail)."""
    try:
        program = _compiled(rule)
    except ValueError as error:
        text = str(error)
        raise ConstraintError(text[text.find("ERROR:") :] if "ERROR:" in text else text) from None
    for name in program.functions():
        if name[0] not in "_@!" and name not in _STANDARD_FUNCTIONS:
            raise ConstraintError(
                f"ERROR: <input>: undeclared reference to '{name}' (in container '')"
            )
    try:
        result = _run(program, [])
    except Exception:  # the rule needs properties to be judged: checked when evaluated
        return
    if not isinstance(result, bool):
        raise ConstraintError("cel expressions must have type Bool")


def _run(program: cel.Program, properties: Sequence[Mapping[str, Any]]) -> Any:
    import cel

    context = cel.Context(
        variables={
            "properties": [{"type": p.get("type"), "value": p.get("value")} for p in properties]
        },
        functions={"semver_compare": semver_compare},
    )
    return program.execute(context)


def evaluate(rule: str, properties: Sequence[Mapping[str, Any]]) -> bool:
    """The rule against one bundle's properties; an error or a non-boolean is false."""
    try:
        result = _run(_compiled(rule), properties)
    except Exception:  # OLM's celPredicate.Test: an evaluation error means "not satisfied"
        return False
    return result is True


def predicates(values: Sequence[Any]) -> tuple[tuple[Predicate, ...], str]:
    """Every `olm.constraint` value of one bundle, or the first error (OLM stops at it)."""
    found = []
    for value in values:
        try:
            found.append(parse(value))
        except ConstraintError as error:
            return (), str(error)
    return tuple(found), ""
