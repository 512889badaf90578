"""operator-framework/api's default bundle validators (CSV and bundle checks, §7), over a
bundle whose manifests are inline. Errors make a catalog invalid; warnings are advice."""

from __future__ import annotations

import json
import re

from olm.api import body
from olm.api.views import CsvView, Gvk
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

    meta, spec = body.meta(csv), csv.get("spec") or {}
    view = CsvView.of(csv)
    for field, value in (("metadata.name", view.name), ("spec.replaces", view.replaces)):
        if value:
            problem = _name_problem(field, str(value))
            if problem:
                error("csv-name", problem, "use lowercase letters, digits, '-' and '.'")
    if not spec.get("displayName"):
        error("csv-required", "required field missing: spec.displayName", "add spec.displayName")
    if not view.strategy:
        error(
            "csv-required",
            "required field missing: spec.install.strategy",
            "set spec.install.strategy: deployment",
        )
    if not view.install_modes:
        error("csv-install-modes", "install modes not found", "list spec.installModes")
    elif not any(m.supported for m in view.install_modes):
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
    owned = view.owned_gvks
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
        present: set[Gvk] = set()
        for crd in crds:
            crd_spec = crd.get("spec") or {}
            for version in [v.get("name") for v in crd_spec.get("versions") or []] or [
                crd_spec.get("version")
            ]:
                present.add(
                    Gvk(
                        str(crd_spec.get("group", "")),
                        str(version),
                        str((crd_spec.get("names") or {}).get("kind", "")),
                    )
                )
        present_groups = {p.group for p in present}
        owned_crds = {g for g in owned if g in present or g.group in present_groups}
        for missing in sorted({c.gvk for c in view.owned_crds} - present):
            error(
                "bundle-owned-crd",
                f'owned CRD "{missing.group}/{missing.version}, Kind={missing.kind}" not found in bundle',
                "add the CRD manifest to the bundle",
            )
        owned_kinds = {(g.group, g.kind) for g in owned_crds}
        for gvk in sorted(present):
            if (gvk.group, gvk.kind) not in owned_kinds:
                error(
                    "bundle-extra-crd",
                    f'CRD "{gvk.group}/{gvk.version}, Kind={gvk.kind}" is present in bundle but not defined in CSV',
                    "own it in spec.customresourcedefinitions.owned",
                )
    accounts = {d.service_account for d in view.deployments if d.service_account}
    for obj in objects:
        if obj.get("kind") == "ServiceAccount" and body.meta(obj).get("name") in accounts:
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
