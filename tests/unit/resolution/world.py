"""Resolver inputs for the resolution tests: the samples catalog as candidates and a wanted
Subscription."""

from __future__ import annotations

from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.resolution.catalogs import candidates
from olm.resolution.model import Candidate, Source, Wanted

SAMPLES = Source("samples", "olm", own_namespace=False)


MEMCACHED_API = ("cache.example.com", "v1alpha1", "Memcached")


def samples() -> list[Candidate]:
    return candidates(load(CATALOG.parent), SAMPLES)


def want(name: str = "memcached", package: str = "memcached-operator", **fields: str) -> Wanted:
    return Wanted(name=name, package=package, source="samples", source_namespace="olm", **fields)
