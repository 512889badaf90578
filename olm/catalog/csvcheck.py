"""operator-framework/api's default bundle validators (CSV and bundle checks, §7), over a
bundle whose manifests are inline. Errors make a catalog invalid; warnings are advice."""

from __future__ import annotations

import json
import re
from typing import Any

from olm.catalog.model import Bundle, Problem
from olm.catalog.semver import SemverError, parse_version

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CASED_ANNOTATIONS = (
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
)


def _name_problem(field: str, value: str) -> str | None:
    if len(value) > 63 or not DNS_SUBDOMAIN.fullmatch(value):
        return (
            f'{field} "{value}" is invalid: must be a DNS-1123 subdomain of at most 63 characters'
        )
    return None


def _owned_gvks(spec: dict[str, Any]) -> set[tuple[str, str, str]]:
    owned = set()
    for crd in (spec.get("customresourcedefinitions") or {}).get("owned") or []:
        name = str(crd.get("name", ""))
        owned.add(
            (
                name.split(".", 1)[1] if "." in name else "",
                str(crd.get("version", "")),
                str(crd.get("kind", "")),
            )
        )
    for service in (spec.get("apiservicedefinitions") or {}).get("owned") or []:
        owned.add(
            (
                str(service.get("group", "")),
                str(service.get("version", "")),
                str(service.get("kind", "")),
            )
        )
    return owned


def check_bundle(bundle: Bundle) -> list[Problem]:
    csv = bundle.csv
    # These are `operator-sdk bundle validate`'s rules for registry+v1 bundles; `opm validate`
    # does not apply them to file-based catalogs, and legacy ConfigMap CSVs predate them.
    if csv is None or bundle.format not in ("bundle", "package-manifest"):
        return []
    where = (bundle.source, f"bundle {bundle.name}")
    problems: list[Problem] = []

    def error(rule: str, message: str, hint: str) -> None:
        problems.append(Problem(rule, message, hint, *where))

    def warning(rule: str, message: str, hint: str) -> None:
        problems.append(Problem(rule, message, hint, *where, level="warning"))

    meta, spec = csv.get("metadata") or {}, csv.get("spec") or {}
    for field, value in (
        ("metadata.name", meta.get("name", "")),
        ("spec.replaces", spec.get("replaces")),
    ):
        if value:
            problem = _name_problem(field, str(value))
            if problem:
                error("csv-name", problem, "use lowercase letters, digits, '-' and '.'")
    if not spec.get("displayName"):
        error("csv-required", "required field missing: spec.displayName", "add spec.displayName")
    if not (spec.get("install") or {}).get("strategy"):
        error(
            "csv-required",
            "required field missing: spec.install.strategy",
            "set spec.install.strategy: deployment",
        )
    modes = [m for m in spec.get("installModes") or [] if isinstance(m, dict)]
    if not modes:
        error("csv-install-modes", "install modes not found", "list spec.installModes")
    elif not any(m.get("supported") for m in modes):
        error(
            "csv-install-modes",
            "none of InstallModeTypes are supported",
            "support at least one install mode",
        )
    if "minKubeVersion" not in spec:
        warning(
            "csv-min-kube-version",
            "spec.minKubeVersion is not set",
            "set the lowest Kubernetes version the operator supports",
        )
    else:
        try:
            parse_version(str(spec["minKubeVersion"]))
        except SemverError:
            error(
                "csv-min-kube-version",
                f"csv.Spec.MinKubeVersion has an invalid value: {spec['minKubeVersion']!r}",
                "use X.Y.Z",
            )
    annotations = meta.get("annotations") or {}
    for key in annotations:
        for cased in CASED_ANNOTATIONS:
            if key != cased and key.lower() == cased.lower():
                error(
                    "csv-annotation-case",
                    f'annotation "{key}" must be spelled "{cased}"',
                    f"rename it to {cased}",
                )
    if "olm.properties" in annotations:
        warning(
            "csv-olm-properties",
            "the olm.properties annotation is deprecated",
            "define these in metadata/properties.yaml",
        )
    examples = annotations.get("alm-examples") or annotations.get("olm.examples")
    owned = _owned_gvks(spec)
    if examples:
        try:
            parsed = json.loads(examples)
        except ValueError as exc:
            error(
                "csv-examples",
                f"invalid example: {exc}",
                "make alm-examples a JSON list of objects",
            )
            parsed = []
        for example in parsed if isinstance(parsed, list) else []:
            if not isinstance(example, dict):
                continue
            group, _, version = str(example.get("apiVersion", "")).rpartition("/")
            if (group, version, str(example.get("kind", ""))) not in owned:
                error(
                    "csv-examples",
                    f"example must have a provided API: {example.get('apiVersion')} {example.get('kind')}",
                    "remove the example or own its API",
                )
    elif owned:
        warning(
            "csv-examples", "example annotations not found", "add alm-examples for the owned APIs"
        )
    objects = bundle.objects
    crds = [o for o in objects if o.get("kind") == "CustomResourceDefinition"]
    if crds:
        present = set()
        for crd in crds:
            crd_spec = crd.get("spec") or {}
            for version in [v.get("name") for v in crd_spec.get("versions") or []] or [
                crd_spec.get("version")
            ]:
                present.add(
                    (
                        str(crd_spec.get("group", "")),
                        str(version),
                        str((crd_spec.get("names") or {}).get("kind", "")),
                    )
                )
        owned_crds = {g for g in owned if g in present or g[0] in {p[0] for p in present}}
        for gvk in sorted(
            _owned_gvks({"customresourcedefinitions": spec.get("customresourcedefinitions")})
            - present
        ):
            error(
                "bundle-owned-crd",
                f'owned CRD "{gvk[0]}/{gvk[1]}, Kind={gvk[2]}" not found in bundle',
                "add the CRD manifest to the bundle",
            )
        owned_kinds = {(g, k) for g, _, k in owned_crds}
        for gvk in sorted(present):
            if (gvk[0], gvk[2]) not in owned_kinds:
                error(
                    "bundle-extra-crd",
                    f'CRD "{gvk[0]}/{gvk[1]}, Kind={gvk[2]}" is present in bundle but not defined in CSV',
                    "own it in spec.customresourcedefinitions.owned",
                )
    accounts = {
        (((d.get("spec") or {}).get("template") or {}).get("spec") or {}).get("serviceAccountName")
        for d in ((spec.get("install") or {}).get("spec") or {}).get("deployments") or []
        if isinstance(d, dict)
    }
    for obj in objects:
        if (
            obj.get("kind") == "ServiceAccount"
            and (obj.get("metadata") or {}).get("name") in accounts
        ):
            error(
                "bundle-service-account",
                f"ServiceAccount {obj['metadata']['name']} is in the bundle but OLM creates it from the CSV",
                "remove the ServiceAccount manifest",
            )
    for index, related in enumerate(spec.get("relatedImages") or []):
        if not isinstance(related, dict) or not related.get("image"):
            error(
                "csv-related-images",
                f"spec.relatedImages[{index}].image is empty",
                "set the image or remove the entry",
            )
    return problems
