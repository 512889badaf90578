"""olm-py's aggregated API server: the PackageManifest API behind the cluster's aggregator."""
