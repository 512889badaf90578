"""The only layer that talks to the API server (client construction, reads, writes)."""
