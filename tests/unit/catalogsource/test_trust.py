"""Catalog trust (`olm run --trusted-catalogs`): the grammar, the canonical spelling, and which
CatalogSource is refused with which sentence, on plain dicts."""

from __future__ import annotations

from typing import Any

import pytest

from olm.catalogsource.trust import (
    ALL_KINDS,
    CatalogKind,
    TrustSpecError,
    announce,
    kind_of,
    parse,
    refusal,
)

IMAGE, ADDRESS, CONFIGMAP = CatalogKind.IMAGE, CatalogKind.ADDRESS, CatalogKind.CONFIGMAP


def source(namespace: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "cat", "namespace": namespace}, "spec": spec}


BY_IMAGE = {"sourceType": "grpc", "image": "registry.example.com/cat:v1"}
BY_ADDRESS = {"sourceType": "grpc", "address": "10.0.0.1:50051"}
BY_CONFIGMAP = {"sourceType": "configmap", "configMap": "cm"}
BY_INTERNAL = {"sourceType": "internal", "configMap": "cm"}


def test_no_flag_means_the_setting_is_off_and_every_catalog_is_used() -> None:
    assert parse([]) is None
    for spec in (BY_IMAGE, BY_ADDRESS, BY_CONFIGMAP, {}):
        assert refusal(None, source("anywhere", **spec)) is None


@pytest.mark.parametrize(
    ("values", "rules", "rendered"),
    [
        (["olm"], {"olm": ALL_KINDS}, "olm"),
        (["olm=image"], {"olm": {IMAGE}}, "olm=image"),
        (
            ["olm=address+image, team-a=configmap"],
            {"olm": {IMAGE, ADDRESS}, "team-a": {CONFIGMAP}},
            "olm=image+address,team-a=configmap",
        ),
        # Repeated flags and repeated namespaces add up.
        (
            ["olm=image", "olm=address", "b"],
            {"olm": {IMAGE, ADDRESS}, "b": ALL_KINDS},
            "b,olm=image+address",
        ),
        (["*=image", "olm"], {"*": {IMAGE}, "olm": ALL_KINDS}, "*=image,olm"),
        (["olm=IMAGE + ConfigMap"], {"olm": {IMAGE, CONFIGMAP}}, "olm=image+configmap"),
        (["olm=image+address+configmap"], {"olm": ALL_KINDS}, "olm"),
    ],
)
def test_the_grammar(values: list[str], rules: dict[str, set[CatalogKind]], rendered: str) -> None:
    trust = parse(values)
    assert trust is not None
    assert {k: set(v) for k, v in trust.rules.items()} == rules
    assert trust.render() == rendered
    assert parse([rendered]) == trust, "the canonical spelling reads back the same"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("", "names no namespace"),
        (" , ", "names no namespace"),
        ("olm,,b", "has an empty entry: remove the extra comma"),
        ("Team_A", "'Team_A' is not a namespace name"),
        ("olm=", "names no kind after '='"),
        ("olm=image+", "'' is not a catalog kind"),
        ("olm=grpc", "'grpc' is not a catalog kind; the kinds are image, address, configmap"),
        ("=image", "'' is not a namespace name"),
    ],
)
def test_bad_values_say_what_is_wrong_and_the_fix(value: str, said: str) -> None:
    with pytest.raises(TrustSpecError) as raised:
        parse([value])
    assert said in str(raised.value)
    assert "--trusted-catalogs" in str(raised.value)


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        (BY_IMAGE, IMAGE),
        (BY_ADDRESS, ADDRESS),
        (BY_CONFIGMAP, CONFIGMAP),
        (BY_INTERNAL, CONFIGMAP),
        ({**BY_IMAGE, **BY_ADDRESS}, ADDRESS),  # spec.address wins over spec.image, as read
        ({"sourceType": "grpc"}, None),
        ({"sourceType": "bogus"}, None),
    ],
)
def test_the_kind_is_what_olm_py_would_read(spec: dict[str, Any], kind: CatalogKind | None) -> None:
    assert kind_of(source("ns", **spec)) is kind


SETTING = ["olm=image+address,team-b=configmap"]


@pytest.mark.parametrize(
    ("namespace", "spec"),
    [
        ("olm", BY_IMAGE),
        ("olm", BY_ADDRESS),
        ("team-b", BY_CONFIGMAP),
        ("team-b", BY_INTERNAL),
        ("team-b", {"sourceType": "grpc"}),  # its own SpecInvalidError says more
    ],
)
def test_trusted_catalogs_are_used(namespace: str, spec: dict[str, Any]) -> None:
    assert refusal(parse(SETTING), source(namespace, **spec)) is None


def test_a_kind_its_namespace_may_not_use_is_refused_with_the_fix() -> None:
    said = refusal(parse(SETTING), source("team-b", **BY_ADDRESS))
    assert said == (
        "catalog kind address (spec.address) is not trusted in namespace team-b: namespace "
        "team-b may use only configmap (olm-py runs with --trusted-catalogs "
        "olm=image+address,team-b=configmap); ask the cluster admin to add team-b=address to "
        "--trusted-catalogs (chart value trustedCatalogs), or use a catalog from namespace olm"
    )


def test_a_namespace_not_listed_is_refused_and_pointed_at_the_trusted_ones() -> None:
    said = refusal(parse(SETTING), source("team-a", **BY_CONFIGMAP))
    assert said is not None
    assert said.startswith(
        "catalog kind configmap (spec.configMap) is not trusted in namespace team-a: no catalog "
        "in namespace team-a is trusted (olm-py runs with --trusted-catalogs "
        "olm=image+address,team-b=configmap); ask the cluster admin to add team-a=configmap"
    )
    assert said.endswith("or use a catalog from namespace team-b")
    nothing = refusal(parse(SETTING), source("team-a", sourceType="grpc"))
    assert nothing is not None and "no CatalogSource in namespace team-a is trusted" in nothing


def test_no_other_namespace_to_suggest() -> None:
    said = refusal(parse(["olm=image"]), source("olm", **BY_ADDRESS))
    assert said is not None and "use a catalog from" not in said


def test_star_trusts_its_kinds_in_every_namespace() -> None:
    trust = parse(["*=image", "olm"])
    assert refusal(trust, source("anywhere", **BY_IMAGE)) is None
    assert refusal(trust, source("olm", **BY_CONFIGMAP)) is None
    said = refusal(trust, source("anywhere", **BY_CONFIGMAP))
    assert said is not None and "namespace anywhere may use only image" in said
    assert "or use a catalog from namespace olm" in said


def test_the_startup_line_and_the_samples_warning() -> None:
    trust = parse(["olm=image"])
    assert trust is not None
    said, warning = announce(trust, "olm")
    assert (
        said == "catalog trust on: only these CatalogSources are used: --trusted-catalogs olm=image"
    )
    assert warning is not None and "add olm=address to use it, or run with --no-samples" in warning
    assert announce(trust, None)[1] is None
    trusting = parse(["olm=address"])
    assert trusting is not None and announce(trusting, "olm")[1] is None


def test_olm_run_takes_the_flag_repeated_and_refuses_a_bad_value_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from olm.cli import build_parser

    args = build_parser().parse_args(
        ["run", "--trusted-catalogs", "olm=image+address", "--trusted-catalogs=team-a"]
    )
    trust = parse(args.trusted_catalogs)
    assert trust is not None and trust.render() == "olm=image+address,team-a"
    assert build_parser().parse_args(["run"]).trusted_catalogs == []
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", "--trusted-catalogs", "olm=grpc"])
    assert exited.value.code == 2
    assert "'grpc' is not a catalog kind" in capsys.readouterr().err
