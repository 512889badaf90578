"""Leader election decisions on a coordination.k8s.io Lease, as plain data (no I/O)."""
