"""The `operators.coreos.com` vocabulary: kinds, versions and (later) phases, reasons,
conditions, labels and annotations. Standard library only; every other layer imports it."""
