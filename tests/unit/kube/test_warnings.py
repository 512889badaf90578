"""The API server's `Warning` headers, as the gateway hears them and a collector gets them."""

from __future__ import annotations

import threading

from olm.kube.warnings import collecting, heard, texts


def test_warning_texts_are_unquoted_one_per_warning() -> None:
    assert texts(
        [
            '299 - "v1alpha1.Hawtio is deprecated, please, use v1.Hawtio instead"',
            '299 - "a \\"quoted\\" word", 299 kube-apiserver "second" "Mon, 01 Jan 2026 00:00:00 GMT"',
            "not a warning",
        ]
    ) == [
        "v1alpha1.Hawtio is deprecated, please, use v1.Hawtio instead",
        'a "quoted" word',
        "second",
    ]


def test_only_the_innermost_collector_of_the_same_thread_hears() -> None:
    heard(['299 - "nobody listens"'])
    with collecting() as outer:
        heard(['299 - "one"'])
        with collecting() as inner:
            heard(['299 - "two"'])
        worker = threading.Thread(target=heard, args=(['299 - "elsewhere"'],))
        worker.start()
        worker.join()
        heard(['299 - "three"'])
    assert (outer, inner) == (["one", "three"], ["two"])
