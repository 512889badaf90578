"""Soak under faults (`make soak`, issue 30): many namespaces under random user actions while
real faults are injected; invariants judged from watch streams. See run.py."""
