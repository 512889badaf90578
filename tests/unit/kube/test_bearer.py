"""Token gateways: the user's token and the cluster's address and CA, nothing else."""

from __future__ import annotations

from pathlib import Path

import yaml

from olm.kube.bearer import Cluster, kubeconfig_token, token_gateway


def kubeconfig(path: Path, user: dict[str, str]) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": user}],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_token_of_the_current_user(tmp_path: Path) -> None:
    assert kubeconfig_token(kubeconfig(tmp_path / "a", {"token": "abc"})) == "abc"
    (tmp_path / "t").write_text("from-file\n")
    assert (
        kubeconfig_token(kubeconfig(tmp_path / "b", {"tokenFile": str(tmp_path / "t")}))
        == "from-file"
    )
    certs = {"client-certificate": "/x.crt", "client-key": "/x.key"}
    assert kubeconfig_token(kubeconfig(tmp_path / "c", certs)) is None
    (tmp_path / "d").write_text(":: not yaml [")
    assert kubeconfig_token(tmp_path / "d") is None


def test_a_token_gateway_carries_the_token_and_no_client_certificate() -> None:
    gateway = token_gateway(Cluster("https://127.0.0.1:6443", "/ca.crt"), "abc", "console")
    configuration = gateway.api.configuration
    assert configuration.api_key == {"BearerToken": "Bearer abc"}
    assert configuration.cert_file is None and configuration.key_file is None
    assert configuration.ssl_ca_cert == "/ca.crt" and gateway.field_manager == "console"
