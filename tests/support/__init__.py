"""Helpers that several test modules share: the test cluster, its waits and reports, the
e2e story steps, the fuzz corpus.

Invariants: a support module defines no test and no fixture (fixtures live in the
conftest.py of the folder that uses them, so pytest finds each once); test modules import
helpers from here, never from a conftest.py or from another test module.
"""
