"""The ClusterServiceVersion lifecycle as pure functions: requirements, status, phase machine."""
