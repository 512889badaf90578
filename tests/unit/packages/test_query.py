"""Which PackageManifests a request sees, and how they are answered."""

from __future__ import annotations

import datetime

import pytest

from olm.packages import query
from olm.packages.selectors import SelectorError, matches, parse_labels


def _manifest(
    name: str, namespace: str, catalog: str, labels: dict[str, str] | None = None
) -> dict:
    return {
        "kind": "PackageManifest",
        "apiVersion": "packages.operators.coreos.com/v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"catalog": catalog, **(labels or {})},
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {},
        "status": {
            "catalogSource": catalog,
            "catalogSourceDisplayName": f"{catalog} display",
            "defaultChannel": "stable",
            "channels": [
                {
                    "name": "stable",
                    "currentCSV": f"{name}.v1",
                    "currentCSVDesc": {"icon": [{"base64data": "aGk=", "mediatype": "image/png"}]},
                    "entries": None,
                }
            ],
        },
    }


CATALOGS = [
    query.Visible(
        "olm", "global", [_manifest("etcd", "olm", "global"), _manifest("redis", "olm", "global")]
    ),
    query.Visible("team-a", "mine", [_manifest("etcd", "team-a", "mine", {"tier": "gold"})]),
    query.Visible("team-b", "theirs", [_manifest("kafka", "team-b", "theirs")]),
]


def _names(items: list[dict]) -> list[tuple[str, str, str]]:
    return [
        (i["metadata"]["namespace"], i["metadata"]["name"], i["status"]["catalogSource"])
        for i in items
    ]


def test_a_namespace_sees_its_own_catalogs_first_then_the_global_ones_in_its_name() -> None:
    assert _names(query.visible(CATALOGS, "team-a", "olm")) == [
        ("team-a", "etcd", "mine"),
        ("team-a", "etcd", "global"),
        ("team-a", "redis", "global"),
    ]
    assert _names(query.visible(CATALOGS, "olm", "olm")) == [
        ("olm", "etcd", "global"),
        ("olm", "redis", "global"),
    ]


def test_all_namespaces_see_every_catalog_in_its_own_namespace() -> None:
    assert _names(query.visible(CATALOGS, "", "olm")) == [
        ("olm", "etcd", "global"),
        ("olm", "redis", "global"),
        ("team-a", "etcd", "mine"),
        ("team-b", "kafka", "theirs"),
    ]


def test_selectors() -> None:
    gold = parse_labels("tier=gold")
    assert _names(query.visible(CATALOGS, "", "olm", gold)) == [("team-a", "etcd", "mine")]
    assert _names(query.visible(CATALOGS, "team-a", "olm", name="redis")) == [
        ("team-a", "redis", "global")
    ]
    assert query.name_selected("metadata.name=etcd") == "etcd"


@pytest.mark.parametrize(
    ("selector", "name"),
    [
        ("", ""),
        ("metadata.name=etcd", "etcd"),
        ("metadata.name==etcd", "etcd"),
        # Another known field beside an exact name: the name selects, the rest is ignored.
        ("metadata.namespace=x,metadata.name=etcd", "etcd"),
        (r"metadata.name=a\,b", "a,b"),
    ],
)
def test_field_selectors_select_by_exact_name(selector: str, name: str) -> None:
    assert query.name_selected(selector) == name


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        # Worded as packageserver words them (found by the parity suite).
        (
            "status.catalogSource=x",
            '"status.catalogSource" is not a known field selector: only "metadata.name", '
            '"metadata.namespace"',
        ),
        ("metadata.name!=etcd", "field label not supported: metadata.name"),
        ("metadata.namespace=olm", "field label not supported: metadata.namespace"),
        # Terms are read in sorted order, nothing trimmed.
        ("z=1,metadata.name=a", '"z" is not a known field selector'),
        ("metadata.name =a", '"metadata.name " is not a known field selector'),
        ("name", "invalid selector: 'name'; can't understand 'name'"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
        (r"metadata.name=a\x", r"invalid field selector: invalid escape sequence: \x"),
    ],
)
def test_field_selectors_refused_as_packageserver_refuses_them(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as raised:
        query.name_selected(selector)
    assert str(raised.value).startswith(message)
    # A known field it does not serve: packageserver's storage refuses it with a plain error,
    # which reaches kubectl as 500 with no reason ("Error from server: ..."); the rest is 400.
    unsupported = message.startswith("field label not supported")
    assert (raised.value.code, raised.value.reason) == (
        (500, "") if unsupported else (400, "BadRequest")
    )
    status = query.status_error(raised.value.code, raised.value.reason, str(raised.value))
    assert ("reason" in status) is not unsupported


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("", {}, True),
        ("a", {"a": ""}, True),
        ("!a", {"a": ""}, False),
        ("a=1", {"a": "1"}, True),
        ("a==1,b!=2", {"a": "1"}, True),
        ("a!=1", {"a": "1"}, False),
        ("a in (1, 2)", {"a": "2"}, True),
        ("a notin (1,2),b", {"a": "3", "b": "x"}, True),
        (
            "operatorframework.io/arch.amd64=supported",
            {"operatorframework.io/arch.amd64": "supported"},
            True,
        ),
        ("rank>2", {"rank": "3"}, True),
        ("rank > 2", {"rank": "2"}, False),
        ("rank<2", {"rank": "-1"}, True),
        ("rank<2", {}, False),
        ("rank>2", {"rank": "three"}, False),
    ],
)
def test_label_selector_grammar(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert matches(parse_labels(selector), labels) is expected


def test_a_bad_label_selector_says_what_it_expected() -> None:
    with pytest.raises(SelectorError, match='"a b" of labelSelector'):
        parse_labels("a b")
    with pytest.raises(SelectorError, match="the value must be an integer"):
        parse_labels("rank>two")


def test_icons_are_blanked_in_answers_but_served_by_the_subresource() -> None:
    item = query.visible(CATALOGS, "team-b", "olm", name="kafka") or query.visible(
        CATALOGS, "", "olm", name="kafka"
    )
    assert "icon" not in item[0]["status"]["channels"][0]["currentCSVDesc"]
    stored = CATALOGS[2].manifests[0]
    icon = query.icon(stored)
    assert (icon.data, icon.media_type, icon.etag) == (
        b"hi",
        "image/png",
        '"kafka.stable.kafka.v1"',
    )
    bare = _manifest("x", "olm", "global")
    bare["status"]["channels"][0]["currentCSVDesc"] = {}
    assert query.icon(bare).media_type == "image/svg+xml"


def test_table_columns_and_ages() -> None:
    now = datetime.datetime(2026, 1, 3, 1, 0, tzinfo=datetime.UTC)
    table = query.table(query.visible(CATALOGS, "team-b", "olm"), now)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Catalog", "Age"]
    assert table["rows"][0]["cells"] == ["kafka", "theirs display", "2d1h"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert "object" not in query.table(query.visible(CATALOGS, "", "olm"), now, "None")["rows"][0]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (5, "5s"),
        (119, "119s"),
        (125, "2m5s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (30 * 3600, "30h"),
        (50 * 3600, "2d2h"),
        (10 * 86400, "10d"),
        (800 * 86400, "2y70d"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert query.human_duration(seconds) == text
