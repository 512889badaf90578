"""OLM v0's Prometheus metrics (names and labels as OLM's pkg/metrics), and the HTTP endpoints
that serve them with /healthz and /readyz."""
