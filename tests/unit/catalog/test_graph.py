"""Upgrade candidates and paths to the head (OLM's one hop per resolution)."""

from __future__ import annotations

from olm.catalog.graph import check_chain, head, path_to_head, upgrade_candidates
from olm.catalog.model import Bundle, Channel, Entry


def bundles(*versions: tuple[str, str]) -> dict[str, Bundle]:
    return {
        name: Bundle(
            name,
            "p",
            properties=[{"type": "olm.package", "value": {"packageName": "p", "version": version}}],
        )
        for name, version in versions
    }


CHANNEL = Channel(
    "stable",
    "p",
    [
        Entry("p.v1.0.0"),
        Entry("p.v1.1.0", replaces="p.v1.0.0"),
        Entry("p.v1.2.0", replaces="p.v1.1.0", skips=["p.v1.1.5"]),
        Entry("p.v2.0.0", replaces="p.v1.2.0", skip_range=">=1.0.0 <2.0.0"),
    ],
)
BUNDLES = bundles(
    ("p.v1.0.0", "1.0.0"), ("p.v1.1.0", "1.1.0"), ("p.v1.2.0", "1.2.0"), ("p.v2.0.0", "2.0.0")
)


def test_head_and_chain() -> None:
    assert head(CHANNEL) == "p.v2.0.0"
    checked = check_chain(CHANNEL)
    assert checked.chain == ["p.v2.0.0", "p.v1.2.0", "p.v1.1.0", "p.v1.0.0"]
    assert checked.stranded == [] and checked.cycle == []


def test_candidates_prefer_the_entry_nearest_the_head() -> None:
    # 1.0.0 is replaced by 1.1.0 and in 2.0.0's skipRange: the head wins.
    assert upgrade_candidates(CHANNEL, BUNDLES, "p.v1.0.0") == ["p.v2.0.0", "p.v1.1.0"]
    assert path_to_head(CHANNEL, BUNDLES, "p.v1.0.0") == ["p.v2.0.0"]


def test_a_skipped_version_not_in_the_channel_is_a_candidate_source() -> None:
    assert upgrade_candidates(CHANNEL, BUNDLES, "p.v1.1.5", "1.1.5") == ["p.v2.0.0", "p.v1.2.0"]


def test_without_skip_range_the_path_takes_one_hop_at_a_time() -> None:
    plain = Channel("stable", "p", [Entry(e.name, e.replaces, e.skips) for e in CHANNEL.entries])
    assert path_to_head(plain, BUNDLES, "p.v1.0.0") == ["p.v1.1.0", "p.v1.2.0", "p.v2.0.0"]
    assert upgrade_candidates(plain, BUNDLES, "p.v2.0.0") == []


def test_an_unparsable_skip_range_is_ignored_as_in_olm() -> None:
    broken = Channel("stable", "p", [Entry("p.v1.0.0"), Entry("p.v2.0.0", skip_range="~1.0")])
    assert upgrade_candidates(broken, BUNDLES, "p.v1.0.0") == []


def test_pictures_mark_heads_defaults_and_edge_kinds() -> None:
    import xml.dom.minidom

    from olm.catalog.model import Package
    from olm.catalog.picture import dot, mermaid, svg

    package = Package("p", default_channel="stable", channels={"stable": CHANNEL}, bundles=BUNDLES)
    drawing = xml.dom.minidom.parseString(svg(package))
    titles = [t.firstChild.data for t in drawing.getElementsByTagName("title")]
    assert sorted(set(titles)) == ["replaces", "skipRange", "skips"]
    assert "p.v2.0.0 (head)" in svg(package) and "(default channel)" in svg(package)
    assert "style=dashed" in dot(package) and "style=dotted" in dot(package)
    assert "**p.v2.0.0** (head)" in mermaid(package) and "channel stable (default)" in mermaid(
        package
    )
