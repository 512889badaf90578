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
