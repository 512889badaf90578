"""What an uninstall does with a package's CRDs: olm-py's `olm-py.io/cleanup` annotation.

OLM v0 has no such setting (it never deletes a CRD), so it is an annotation on OLM's own kinds,
never a new field (docs/uninstall.md):

- On a Subscription, CLEANUP_ANNOTATION chooses what `olm uninstall-operator` does with the
  CRDs the package's CSVs own: `keep` (the default, OLM v0's behaviour) or `crds-when-unused`
  (delete each one once no custom resource of it remains anywhere and no other installed CSV
  owns or requires it).
- On a CRD, CLEANUP_ANNOTATION `crds-when-unused` means "delete me once unused": an uninstall
  that found the CRD still in use writes it, with CLEANUP_OPERATORS_ANNOTATION listing the
  Operators (`<package>.<namespace>`, comma-separated, sorted) whose uninstall is waiting, so a
  later run, after the Subscription and CSV are gone, still knows the CRD was the package's.

Closed set: nothing else is written, and any other value is read as `keep`.
"""

from __future__ import annotations

from enum import StrEnum

CLEANUP_ANNOTATION = "olm-py.io/cleanup"
CLEANUP_OPERATORS_ANNOTATION = "olm-py.io/cleanup-operators"


class CleanupPolicy(StrEnum):
    KEEP = "keep"
    CRDS_WHEN_UNUSED = "crds-when-unused"


DEFAULT_CLEANUP = CleanupPolicy.KEEP
