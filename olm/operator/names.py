"""Operator names and component label keys, as OLM v0.38 makes them
(`pkg/controller/operators/decorators/operator.go`).

- A Subscription's Operator is `<package>.<namespace>` (`package_operator_name`).
- Its label key is `operators.coreos.com/<name>`, the name cut to 63 bytes and then stripped of
  trailing '.', '_' and '-' (`component_label_key`); every key with that prefix names an
  Operator, whose name is the rest of the key (`operator_names`). So the Operator of a long
  package name is named after the cut key.
- OLM validates neither; the API server does. `label_key_problem` and `operator_name_problem`
  say in advance, in plain words, what it would refuse: olm-py then writes nothing (OLM retries
  the refused write for ever) and the controller says so once.

Invariant: pure; the same input always gives the same key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from olm.api.labels import COMPONENT_LABEL_NAME_LIMIT, COMPONENT_LABEL_PREFIX

_TRAILING = b"._-"
# Kubernetes' qualified-name rule for the part of a label key after the prefix.
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
# DNS-1123 subdomain: the names of cluster-scoped custom resources.
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
SUBDOMAIN_LIMIT = 253


def package_operator_name(package: str, namespace: str) -> str:
    """OLM's `NewPackageOperator`: `<package>.<namespace>` (just the package for all
    namespaces, which no Subscription has)."""
    return f"{package}.{namespace}" if namespace else package


def component_label_key(name: str) -> str | None:
    """OLM's `ComponentLabelKey` for the Operator `name`; None where OLM errs (an empty name, or
    one that is nothing but '.', '_' and '-' once cut)."""
    if not name:
        return None
    raw = name.encode()
    if len(raw) > COMPONENT_LABEL_NAME_LIMIT:
        raw = raw[:COMPONENT_LABEL_NAME_LIMIT].rstrip(_TRAILING)
        if not raw:
            return None
    return COMPONENT_LABEL_PREFIX + raw.decode(errors="replace")


def operator_names(labels: Mapping[str, str] | None) -> list[str]:
    """OLM's `OperatorNames`: the Operator each `operators.coreos.com/*` key names, sorted."""
    return sorted(
        key[len(COMPONENT_LABEL_PREFIX) :]
        for key in labels or {}
        if key.startswith(COMPONENT_LABEL_PREFIX)
    )


def is_component_key(key: str) -> bool:
    return key.startswith(COMPONENT_LABEL_PREFIX)


def label_key_problem(key: str) -> str | None:
    """Why the API server would refuse `key` as a label key, or None."""
    name = key[len(COMPONENT_LABEL_PREFIX) :] if is_component_key(key) else key
    if len(name.encode()) > COMPONENT_LABEL_NAME_LIMIT:
        return f"the part after the prefix is longer than {COMPONENT_LABEL_NAME_LIMIT} characters"
    if not _LABEL_NAME.fullmatch(name):
        return (
            "a label key's name may hold only ASCII letters, digits, '-', '_' and '.', and must "
            "begin and end with a letter or digit"
        )
    return None


def operator_name_problem(name: str) -> str | None:
    """Why the API server would refuse `name` for an Operator object, or None."""
    if len(name) > SUBDOMAIN_LIMIT:
        return f"it is longer than {SUBDOMAIN_LIMIT} characters"
    if not _SUBDOMAIN.fullmatch(name):
        return (
            "an object name may hold only lower-case ASCII letters, digits, '-' and '.', and "
            "must begin and end with a letter or digit"
        )
    return None
