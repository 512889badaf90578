"""CatalogSource source types, connection states and status reasons, as OLM v0 names them.

Closed sets (operator-framework/api `v1alpha1/catalogsource_types.go`, olm-behaviour.md §1.4).
"""

from __future__ import annotations

from enum import StrEnum

# The namespace whose catalogs serve every namespace (OLM's --namespace of the catalog-operator).
GLOBAL_CATALOG_NAMESPACE = "olm"


class SourceType(StrEnum):
    GRPC = "grpc"
    CONFIGMAP = "configmap"
    INTERNAL = "internal"


class ConnectionState(StrEnum):
    """status.connectionState.lastObservedState: gRPC connectivity states."""

    IDLE = "IDLE"
    CONNECTING = "CONNECTING"
    READY = "READY"
    TRANSIENT_FAILURE = "TRANSIENT_FAILURE"
    SHUTDOWN = "SHUTDOWN"


class CatalogSourceReason(StrEnum):
    SPEC_INVALID_ERROR = "SpecInvalidError"
    CONFIGMAP_ERROR = "ConfigMapError"
    REGISTRY_SERVER_ERROR = "RegistryServerError"
    INVALID_INTERVAL_ERROR = "InvalidIntervalError"


class SecurityConfig(StrEnum):
    """spec.grpcPodConfig.securityContextConfig."""

    LEGACY = "legacy"
    RESTRICTED = "restricted"


# The registry Service OLM puts in front of a catalog's registry pod (and olm-py in front of the
# catalog it serves in-process): named after the CatalogSource, one port named "grpc".
REGISTRY_PROTOCOL = "grpc"
REGISTRY_PORT = 50051
REGISTRY_PORT_NAME = "grpc"
# The label OLM puts on a catalog's registry pod and Service: the CatalogSource's name.
CATALOG_SOURCE_LABEL = "olm.catalogSource"


def registry_service_name(catalog_source: str) -> str:
    """The registry Service's name: the CatalogSource's, with dots (not allowed in a Service
    name) made dashes, as OLM's grpc reconciler does."""
    return catalog_source.replace(".", "-")
