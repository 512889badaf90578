"""The samples catalog keeps its port across restarts of `olm run` when it can, so a restart
does not rewrite CatalogSource olm/samples (issue 16)."""

from __future__ import annotations

import socket

from olm.app import _free_port, _previous_port


def test_the_previous_port_is_read_from_a_loopback_address_only() -> None:
    assert _previous_port({"spec": {"address": "127.0.0.1:50051"}}) == 50051
    assert _previous_port({"spec": {"address": "10.0.0.1:50051"}}) == 0
    assert _previous_port({"spec": {"address": "127.0.0.1:http"}}) == 0
    assert _previous_port({"spec": {}}) == 0
    assert _previous_port(None) == 0


def test_a_free_previous_port_is_kept_and_a_taken_one_is_replaced() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert _free_port(free) == free
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        other = _free_port(port)
        assert other != port and other > 0
    assert _free_port(0) > 0
