"""InstallPlans: the steps that install resolved bundles (pure planning)."""
