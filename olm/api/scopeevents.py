"""Event reasons olm-py adds for global operators where OLM v0 only logs a sync error.

OLM v0 retries forever, silently, when a copied CSV cannot be written (a real CSV of the same
name is installed in that namespace) or when an AllNamespaces CSV has no owned Roles to lift
(`no owned roles found`). olm-py says so once on the original CSV, as a Warning Event naming
the fix (docs/differences.md). The copy-disabled Event is OLM's own
(`olm.api.scope.DISABLED_COPIED_CSVS_EVENT_REASON`).
"""

from __future__ import annotations

from enum import StrEnum


class ScopeEventReason(StrEnum):
    # A namespace the CSV's OperatorGroup targets already holds a non-copied CSV of its name.
    COPY_BLOCKED = "CopiedCSVBlocked"
    # The CSV's namespaced permissions cannot be widened to its OperatorGroup's scope.
    SCOPE_PERMISSIONS_NOT_GRANTED = "ScopePermissionsNotGranted"
