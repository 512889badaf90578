"""One module per controller, plus the watch wiring, the store and the work queue."""
