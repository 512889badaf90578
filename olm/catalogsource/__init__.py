"""CatalogSources: what to read, how to explain failures, and the status (pure)."""
