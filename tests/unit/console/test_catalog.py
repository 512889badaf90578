"""The catalog browser's cards, filters and facets, read from PackageManifests."""

from __future__ import annotations

from typing import Any

from olm.console.catalog import Filters, Page, browse, card, page_of


def manifest(
    name: str,
    catalog: str = "samples",
    provider: str = "olm-py",
    capability: str = "Basic Install",
    modes: tuple[str, ...] = ("OwnNamespace",),
    display: str = "",
    keywords: tuple[str, ...] = (),
) -> dict[str, Any]:
    desc = {
        "displayName": display or name.title(),
        "version": "1.0.0",
        "annotations": {"capabilities": capability, "description": f"{name} does things"},
        "installModes": [{"type": m, "supported": True} for m in modes]
        + [{"type": "MultiNamespace", "supported": False}],
        "keywords": list(keywords),
        "description": "# Long\n\nText",
        "customresourcedefinitions": {"owned": [{"name": "as.example.com", "kind": "A"}]},
    }
    return {
        "metadata": {"name": name, "namespace": "default"},
        "status": {
            "packageName": name,
            "catalogSource": catalog,
            "catalogSourceNamespace": "olm",
            "catalogSourceDisplayName": catalog.title(),
            "provider": {"name": provider},
            "defaultChannel": "stable",
            "channels": [
                {
                    "name": "alpha",
                    "currentCSV": f"{name}.v0.1.0",
                    "currentCSVDesc": {"version": "0.1.0"},
                },
                {
                    "name": "stable",
                    "currentCSV": f"{name}.v1.0.0",
                    "currentCSVDesc": desc,
                    "entries": [{"name": f"{name}.v1.0.0", "version": "1.0.0"}],
                },
            ],
        },
    }


def test_a_card_describes_the_default_channel_head() -> None:
    c = card(manifest("etcd", keywords=("kv",)))
    assert (c.name, c.catalog, c.catalog_namespace, c.provider) == (
        "etcd",
        "samples",
        "olm",
        "olm-py",
    )
    assert (c.version, c.capability, c.summary) == ("1.0.0", "Basic Install", "etcd does things")
    assert c.install_modes == ("OwnNamespace",) and c.keywords == ("kv",)
    assert c.channel(None) is not None and c.channel(None).name == "stable"  # type: ignore[union-attr]
    assert c.channel("alpha").current_csv == "etcd.v0.1.0"  # type: ignore[union-attr]
    assert c.channel("stable").owned[0]["kind"] == "A"  # type: ignore[union-attr]
    assert c.key == "olm/etcd"


def test_a_malformed_manifest_is_a_card_with_what_could_be_read() -> None:
    c = card({"metadata": {"name": "odd"}, "status": {"channels": "nope", "provider": 3}})
    assert c.name == "odd" and c.channels == () and c.provider == "" and c.channel(None) is None


def test_filters_and_facets() -> None:
    manifests = [
        manifest("etcd", catalog="community", provider="CoreOS", modes=("AllNamespaces",)),
        manifest("memcached", display="Memcached Operator", capability="Seamless Upgrades"),
        manifest("redis", keywords=("keyvalue",)),
    ]
    shown, facets = browse(manifests, Filters())
    assert [c.name for c in shown] == ["etcd", "memcached", "redis"]
    assert facets.catalogs == (("community", 1), ("samples", 2))
    assert ("AllNamespaces", 1) in facets.install_modes
    assert [c.name for c in browse(manifests, Filters(query="KEYVAL"))[0]] == ["redis"]
    assert [c.name for c in browse(manifests, Filters(catalog="community"))[0]] == ["etcd"]
    assert [c.name for c in browse(manifests, Filters(provider="olm-py"))[0]] == [
        "memcached",
        "redis",
    ]
    assert [c.name for c in browse(manifests, Filters(capability="Seamless Upgrades"))[0]] == [
        "memcached"
    ]
    assert [c.name for c in browse(manifests, Filters(install_mode="AllNamespaces"))[0]] == ["etcd"]


def test_filters_from_a_query_string_are_trimmed_and_bounded() -> None:
    f = Filters.from_query(
        {"q": "  x ", "catalog": "c", "mode": "OwnNamespace", "provider": "p" * 300}
    )
    assert (f.query, f.catalog, f.install_mode, len(f.provider)) == ("x", "c", "OwnNamespace", 200)


def test_cards_come_in_pages() -> None:
    cards = [card(manifest(f"op-{i:03d}")) for i in range(130)]
    first = page_of(cards, None)
    assert (len(first.cards), first.number, first.pages, first.matched) == (60, 1, 3, 130)
    last = page_of(cards, "3")
    assert [c.name for c in last.cards] == [f"op-{i:03d}" for i in range(120, 130)]
    assert page_of(cards, "99").number == 3 and page_of(cards, "x").number == 1
    assert page_of([], "2") == Page((), 1, 1, 0)


def test_filters_as_a_query_string_for_the_next_page() -> None:
    assert Filters(query="a b", install_mode="OwnNamespace").as_query() == "q=a+b&mode=OwnNamespace"
    assert Filters().as_query() == ""
