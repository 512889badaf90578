"""Which bundle satisfies a dependency when several could, as OLM v0.38's resolver sorts them
(resolver.go sortBundles/sortChannel): default channels first, then by package name, then by
channel name, each channel from its head down; an entry its channel skips is no candidate from
that channel. Found by the corpus parity run: noobaa-operator needs objectbucket APIs that
awss3-operator-registry 1.0.0 (skipped in its default channel) and lib-bucket-provisioner
1.0.0 both own; OLM installs lib-bucket-provisioner."""

from __future__ import annotations

from olm.resolution.model import Candidate, Source, Wanted
from olm.resolution.resolver import Resolver

CORPUS = Source("corpus", "olm", own_namespace=False)
BUCKET = ("objectbucket.io", "v1alpha1", "ObjectBucket")


def bundle(name: str, package: str, channel: str, **fields: object) -> Candidate:
    return Candidate(name, package, channel, CORPUS, name.rsplit(".v", 1)[-1], **fields)  # type: ignore[arg-type]


NEEDY = bundle("noobaa.v2.1.1", "noobaa", "alpha", requires_gvks=(BUCKET,), default_channel=True)


def resolve(*candidates: Candidate) -> list[str]:
    decision = Resolver([NEEDY, *candidates], [], [CORPUS]).resolve(
        [Wanted("noobaa", "noobaa", "corpus", "olm")]
    )
    assert decision.ok, decision.failures
    return [c.bundle for c in decision.dependencies]


def test_a_skipped_entry_is_no_provider_from_its_channel() -> None:
    skipped = bundle(
        "awss3.v1.0.0", "awss3", "alpha", provides=(BUCKET,), default_channel=True, skipped=True
    )
    head = bundle("awss3.v1.0.1", "awss3", "alpha", default_channel=True)
    library = bundle(
        "lib-bucket.v1.0.0", "lib-bucket", "alpha", provides=(BUCKET,), default_channel=True
    )
    assert resolve(skipped, head, library) == ["lib-bucket.v1.0.0"]


def test_the_same_bundle_still_provides_from_a_channel_that_does_not_skip_it() -> None:
    original = bundle("awss3.v1.0.0", "awss3", "original", provides=(BUCKET,))
    assert resolve(original) == ["awss3.v1.0.0"]


def test_default_channels_first_then_package_name_before_channel_name() -> None:
    zeta = bundle("zeta.v1.0.0", "zeta", "a-channel", provides=(BUCKET,), default_channel=True)
    alpha = bundle("alpha.v1.0.0", "alpha", "z-channel", provides=(BUCKET,), default_channel=True)
    other = bundle("aaa.v1.0.0", "aaa", "beta", provides=(BUCKET,))
    assert resolve(zeta, alpha, other) == ["alpha.v1.0.0"]
