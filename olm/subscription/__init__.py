"""Namespace resolution for Subscriptions (OLM v0 §5.2, §5.5) as pure decisions."""
