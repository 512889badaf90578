"""Which configuration `olm run` uses: controller-runtime's order."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm.kube import client


@pytest.mark.parametrize(
    ("case", "explicit", "env_kubeconfig", "service_host", "home_config", "expected"),
    [
        ("explicit wins", "/k/explicit", "/k/env", "10.0.0.1", True, "/k/explicit"),
        ("then $KUBECONFIG", None, "/k/env", "10.0.0.1", True, "/k/env"),
        ("in a pod: in-cluster", None, None, "10.0.0.1", True, None),
        ("on a laptop: ~/.kube/config", None, None, None, True, "HOME"),
        ("nothing: in-cluster (its error says why)", None, None, None, False, None),
    ],
)
def test_source(
    case: str,
    explicit: str | None,
    env_kubeconfig: str | None,
    service_host: str | None,
    home_config: bool,
    expected: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "config"
    if home_config:
        home.write_text("")
    monkeypatch.setattr(client, "DEFAULT_KUBECONFIG", str(home))
    for name, value in (("KUBECONFIG", env_kubeconfig), ("KUBERNETES_SERVICE_HOST", service_host)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    got = client.source(explicit)
    assert got == (str(home) if expected == "HOME" else expected), case
