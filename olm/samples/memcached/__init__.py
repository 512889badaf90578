"""A small memcached operator: one Deployment per Memcached, `spec.size` replicas."""
