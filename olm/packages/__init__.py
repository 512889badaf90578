"""The PackageManifest API (`packages.operators.coreos.com/v1`) as plain data: what OLM v0's
packageserver serves, built from the catalogs olm-py already holds (docs/packagemanifests.md)."""
