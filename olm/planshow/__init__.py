"""`olm plan show`: the upgrade preview of an InstallPlan, read from the cluster (olm.preview)."""
