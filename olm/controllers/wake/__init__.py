"""What wakes what: for each watched kind, which controllers' keys a change of it wakes.

`graph` holds the whole graph (`WAKE_GRAPH`, a table of store kind -> rules and work kinds,
with its reading in the module's docstring), `related_keys` and `resync_keys`; `core`,
`scope` and `operator` hold the rules of the controller families. Pure: nothing here reads the
API server or writes; the rules see the event's objects and a read-only store.
"""
