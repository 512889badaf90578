"""olm-py's own ServiceAccount: named by the environment or the mounted token, and its
imagePullSecrets, used for pulls after a CatalogSource's spec.secrets."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from olm.image.auth import own_service_account, pull_secret_names, token_service_account


def token(claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


BOUND = {
    "sub": "system:serviceaccount:olm:olm-py",
    "kubernetes.io": {"namespace": "olm", "serviceaccount": {"name": "olm-py", "uid": "u"}},
}
LEGACY = {
    "kubernetes.io/serviceaccount/namespace": "operators",
    "kubernetes.io/serviceaccount/service-account.name": "legacy",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (token(BOUND), ("olm", "olm-py")),
        (token(LEGACY), ("operators", "legacy")),
        (token({"sub": "system:serviceaccount:ns:only-sub"}), ("ns", "only-sub")),
        (token({"sub": "system:admin"}), None),
        (token({}), None),
        ("not-a-jwt", None),
        ("a.!!!.c", None),
        (token(BOUND) + "\n", ("olm", "olm-py")),
    ],
)
def test_the_account_a_token_names(text: str, expected: tuple[str, str] | None) -> None:
    assert token_service_account(text) == expected


@pytest.mark.parametrize(
    ("environ", "files", "expected"),
    [
        ({}, {}, None),  # out of a cluster: no account, nothing extra is read
        ({"OLM_SERVICE_ACCOUNT": "olm-py", "POD_NAMESPACE": "olm"}, {}, ("olm", "olm-py")),
        ({"OLM_SERVICE_ACCOUNT": "olm-py"}, {"namespace": "mounted\n"}, ("mounted", "olm-py")),
        ({"OLM_SERVICE_ACCOUNT": "olm-py"}, {}, None),
        ({"POD_NAMESPACE": "olm"}, {"token": token(BOUND)}, ("olm", "olm-py")),
        (
            {"OLM_SERVICE_ACCOUNT": "flag", "POD_NAMESPACE": "x"},
            {"token": token(BOUND)},
            ("x", "flag"),
        ),
        ({}, {"token": "garbage"}, None),
    ],
)
def test_olm_pys_own_account(
    tmp_path: Path,
    environ: dict[str, str],
    files: dict[str, str],
    expected: tuple[str, str] | None,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert own_service_account(environ, tmp_path) == expected


@pytest.mark.parametrize(
    ("account", "expected"),
    [
        ({"imagePullSecrets": [{"name": "a"}, {"name": "b"}]}, ("a", "b")),
        ({"imagePullSecrets": [{"name": ""}, {}, "x", {"name": "c"}]}, ("c",)),
        ({"imagePullSecrets": None}, ()),
        ({"imagePullSecrets": {"name": "a"}}, ()),
        ({}, ()),
    ],
)
def test_the_pull_secrets_an_account_names(
    account: dict[str, Any], expected: tuple[str, ...]
) -> None:
    assert pull_secret_names(account) == expected
