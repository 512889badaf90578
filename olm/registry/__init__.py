"""Catalog serving: the operator-registry gRPC API (server for any catalog we can read,
client for `opm serve` and other registries)."""
