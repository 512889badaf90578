"""Label, annotation and finalizer keys OLM v0 reads and writes. One place for all of them."""

from __future__ import annotations

from enum import StrEnum


class Label(StrEnum):
    MANAGED = "olm.managed"
    OWNER = "olm.owner"
    OWNER_NAMESPACE = "olm.owner.namespace"
    OWNER_KIND = "olm.owner.kind"
    DEPLOYMENT_SPEC_HASH = "olm.deployment-spec-hash"
    PERMISSIONS_HASH = "olm.permissions.hash"
    COPIED_FROM = "olm.copiedFrom"
    WEBHOOK_DESCRIPTION_GENERATE_NAME = "olm.webhook-description-generate-name"
    WEBHOOK_DESCRIPTION_HASH = "olm.webhook-description-hash"


class Annotation(StrEnum):
    OPERATOR_GROUP = "olm.operatorGroup"
    OPERATOR_NAMESPACE = "olm.operatorNamespace"
    TARGET_NAMESPACES = "olm.targetNamespaces"
    PROVIDED_APIS = "olm.providedAPIs"
    SKIP_RANGE = "olm.skipRange"
    LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
    # On the webhook Secret and the Deployment's pod template: the SHA-256 of the CA's PEM.
    OLM_CA_HASH = "olmcahash"


# `olm.managed`'s one value: OLM labels what its own code writes so (and its caches keep only that).
MANAGED_VALUE = "true"
# The component label of an Operator object: `operators.coreos.com/<operator name>: ""`, the name
# part cut to COMPONENT_LABEL_NAME_LIMIT characters (olm/api/operator.py, olm/operator/names.py).
COMPONENT_LABEL_PREFIX = "operators.coreos.com/"
COMPONENT_LABEL_VALUE = ""
COMPONENT_LABEL_NAME_LIMIT = 63
CSV_CLEANUP_FINALIZER = "operators.coreos.com/csv-cleanup"
OPERATOR_GROUP_UID_LABEL_PREFIX = "olm.operatorgroup.uid/"
OPERATOR_CONDITION_ENV = "OPERATOR_CONDITION_NAME"
# Events carry this as their source component, as OLM's do.
EVENT_SOURCE = "operator-lifecycle-manager"
FIELD_MANAGER = "olm-py"
# The webhook Secret's keys (OLM install/certresources.go): the serving pair, and the CA's
# certificate PEM under OLM's (misleadingly named) olmCAKey.
SECRET_TLS_CERT = "tls.crt"
SECRET_TLS_KEY = "tls.key"
SECRET_OLM_CA = "olmCAKey"
