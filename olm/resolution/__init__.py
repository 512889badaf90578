"""Dependency resolution per namespace (pure): Subscriptions + installed CSVs + catalogs in
scope -> the bundles to install, or why not, in plain words."""
