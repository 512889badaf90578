"""`olm rollback`: back to an earlier CSV of a Subscription's package (docs/beyond-olm.md)."""
