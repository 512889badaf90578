"""The one backoff helper gives exactly the delays of the formulas it replaced."""

from __future__ import annotations

import pytest

from olm.api.backoff import exponential_backoff

FAILURES = range(-1, 80)


@pytest.mark.parametrize(("first", "cap"), [(0.25, 30.0), (1.0, 15.0), (1.0, 30.0)])
def test_capped_doubling_as_the_installplan_and_sample_operator_formulas(
    first: float, cap: float
) -> None:
    # controllers/installplan.py (stale, forbidden) and samples/memcached/operator.py
    for n in range(1, 80):
        assert exponential_backoff(n, first, cap) == min(cap, first * 2 ** (n - 1))


def test_unpack_retry_as_the_catalogimage_formula() -> None:
    for n in FAILURES:
        assert exponential_backoff(n, 5.0, 300.0) == float(min(5.0 * 2 ** max(n - 1, 0), 300.0))


@pytest.mark.parametrize("interval", [1.0, 600.0, 3600.0, 65536.0, 86400.0, 10.0**6])
def test_image_catalog_retry_as_the_catalogsource_formula(interval: float) -> None:
    for n in FAILURES:
        old = min(interval, 1.0 * 2 ** min(max(n, 1) - 1, 16))
        assert min(interval, exponential_backoff(n, 1.0, 1.0 * 2**16)) == old


def test_uncapped_as_the_registry_client_formula() -> None:
    # olm/image/client.py counts attempts from 0.
    for attempt in range(0, 60):
        assert exponential_backoff(attempt + 1, 0.5) == 0.5 * (2**attempt)


def test_first_failure_waits_first_and_few_failures_count_as_one() -> None:
    assert exponential_backoff(1, 0.5, 10.0) == 0.5
    assert exponential_backoff(0, 0.5, 10.0) == exponential_backoff(-3, 0.5, 10.0) == 0.5


def test_cap_holds_for_any_number_of_failures_without_overflow() -> None:
    assert exponential_backoff(10**6, 0.05, 300.0) == 300.0
    assert exponential_backoff(3, 100.0, 30.0) == 30.0, "a first delay over the cap is capped"
