"""OperatorGroups: target namespaces, CSV annotations, install-mode support (pure)."""
