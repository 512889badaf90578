"""Install strategy: from a CSV's `spec.install` to the Deployments OLM owns (pure)."""
